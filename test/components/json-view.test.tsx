// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ReviewCard } from "@/components/review-card/index";
import { JsonView } from "@/components/review-card/json-view";
import { clock, makeBatch, makeCall } from "./review-card-fixtures";

afterEach(cleanup);

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = depth; i > 0; i--) value = { [`level${i}`]: value };
  return value;
}

describe("JsonView", () => {
  it("renders markup in args as inert text", () => {
    const args = {
      note: "<script>alert(1)</script>",
      image: "<img src=x onerror=alert(2)>",
      "<b>key</b>": ["<iframe src=javascript:alert(3)>"],
    };
    const { container } = render(
      <ReviewCard
        batch={makeBatch({ calls: [makeCall({ args, summary: "<i>hi</i>" })] })}
        now={clock}
      />,
    );
    expect(container.querySelector("script, img, iframe, b, i")).toBeNull();
    expect(screen.getByText('"<script>alert(1)</script>"')).toBeTruthy();
    expect(screen.getByText('"<img src=x onerror=alert(2)>"')).toBeTruthy();
    expect(screen.getByText("<b>key</b>")).toBeTruthy();
    expect(screen.getByText("<i>hi</i>")).toBeTruthy();
  });

  it("colors each kind of value", () => {
    const { container } = render(
      <JsonView value={{ s: "text", n: 42, b: false, z: null, list: [1] }} />,
    );
    const kind = (text: string) => screen.getByText(text).className;
    expect(kind('"text"')).toMatch(/jsonString/);
    expect(kind("42")).toMatch(/jsonNumber/);
    expect(kind("false")).toMatch(/jsonBoolean/);
    expect(kind("null")).toMatch(/jsonNull/);
    expect(container.querySelector("[aria-expanded]")).not.toBeNull();
  });

  it("collapses and expands containers", () => {
    render(<JsonView value={{ customer: { name: "Ada", tier: "gold" } }} />);
    const toggle = screen.getByRole("button", { name: /customer/ });
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(screen.queryByText('"Ada"')).not.toBeNull();
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(screen.queryByText('"Ada"')).toBeNull();
  });

  it("truncates long strings behind 'show more'", () => {
    const long = "x".repeat(10_000);
    render(<JsonView value={{ long }} />);
    const text = () => screen.getByText(/^"x+/).textContent ?? "";
    expect(text().length).toBeLessThan(400);
    fireEvent.click(screen.getByRole("button", { name: /show more/ }));
    expect(text().length).toBeGreaterThan(5000);
  });

  it("pages big arrays and keeps deep nesting collapsed", () => {
    const big = Array.from({ length: 5000 }, (_, i) => ({ id: i, label: `item ${i}` }));
    const { container } = render(<JsonView value={{ big, deep: nested(30) }} />);
    // Every node on screen is an <li>: bounded, whatever the size of the args.
    expect(container.querySelectorAll("li").length).toBeLessThan(700);
    expect(screen.getByRole("button", { name: /Show 100 more \(4,900 not shown\)/ })).toBeTruthy();
    expect(screen.queryByText("level8")).not.toBeNull();
    expect(screen.queryByText("level9")).toBeNull();
    expect(screen.queryByText('"bottom"')).toBeNull();

    fireEvent.click(screen.getByRole("button", { name: /Show 100 more/ }));
    expect(screen.getByRole("button", { name: /Show 100 more \(4,800 not shown\)/ })).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: /level8/ }));
    expect(screen.queryByText("level9")).not.toBeNull();
  });
});
