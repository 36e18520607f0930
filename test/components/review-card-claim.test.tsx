// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ReviewCard, type Batch, type DecisionResult } from "@/components/review-card/index";
import { NOW, clock, dana, iso, makeBatch, sam } from "./review-card-fixtures";

afterEach(cleanup);

const claimedBy = (by: { id: string; name: string }, locked = false, minutes = 4): Batch =>
  makeBatch({ claim: { by, expiresAt: iso(minutes * 60_000), locked } });

const onDecide = vi.fn(async (): Promise<DecisionResult> => ({ ok: true, batch: makeBatch() }));

describe("ReviewCard: review claims", () => {
  it("offers 'I'm reviewing this' on an unclaimed card and reports the toggle to the host", async () => {
    const onClaim = vi.fn(async (): Promise<DecisionResult> => ({
      ok: true,
      batch: claimedBy(dana),
    }));
    render(
      <ReviewCard
        batch={makeBatch()}
        viewer={dana}
        onDecide={onDecide}
        onClaim={onClaim}
        now={clock}
      />,
    );
    expect(screen.queryByTestId("claim-status")).toBeNull();
    const button = screen.getByTestId("claim-button");
    expect(button.textContent).toBe("I'm reviewing this");
    expect(button.getAttribute("aria-pressed")).toBe("false");
    await act(async () => fireEvent.click(button));
    expect(onClaim).toHaveBeenCalledWith("batch-1", true);
  });

  it("shows the viewer's own claim with a way to stop", async () => {
    const onClaim = vi.fn(async (): Promise<DecisionResult> => ({ ok: true, batch: makeBatch() }));
    render(
      <ReviewCard
        batch={claimedBy(dana)}
        viewer={dana}
        onDecide={onDecide}
        onClaim={onClaim}
        now={clock}
      />,
    );
    expect(screen.getByTestId("claim-status").textContent).toBe("You are reviewing (4 min left)");
    const button = screen.getByTestId("claim-button");
    expect(button.textContent).toBe("Stop reviewing");
    expect(button.getAttribute("aria-pressed")).toBe("true");
    await act(async () => fireEvent.click(button));
    expect(onClaim).toHaveBeenCalledWith("batch-1", false);
  });

  it("marks someone else's claim; in mark mode the viewer may still decide but not claim", () => {
    render(
      <ReviewCard
        batch={claimedBy(sam, false, 5)}
        viewer={dana}
        onDecide={onDecide}
        onClaim={vi.fn()}
        now={clock}
      />,
    );
    expect(screen.getByTestId("claim-status").textContent).toBe("Sam is reviewing (5 min left)");
    expect(screen.queryByTestId("claim-button")).toBeNull();
    expect(screen.getByTestId("approve-button")).toBeTruthy();
  });

  it("in lock mode takes the decisions away from everyone but the claimant", () => {
    const { rerender } = render(
      <ReviewCard batch={claimedBy(sam, true)} viewer={dana} onDecide={onDecide} now={clock} />,
    );
    expect(screen.getByTestId("claim-status").textContent).toContain("only they can decide");
    expect(screen.queryByTestId("approve-button")).toBeNull();
    rerender(
      <ReviewCard batch={claimedBy(dana, true)} viewer={dana} onDecide={onDecide} now={clock} />,
    );
    expect(screen.getByTestId("approve-button")).toBeTruthy();
  });

  it("hides a claim once it expired by the card's own clock", () => {
    const expired = makeBatch({ claim: { by: sam, expiresAt: iso(-1), locked: true } });
    render(<ReviewCard batch={expired} viewer={dana} onDecide={onDecide} now={() => NOW} />);
    expect(screen.queryByTestId("claim-status")).toBeNull();
    expect(screen.getByTestId("approve-button")).toBeTruthy();
  });

  it("shows the refusal when a claim fails", async () => {
    const onClaim = vi.fn(async (): Promise<DecisionResult> => ({
      ok: false,
      code: "already_claimed",
      message: "Sam is reviewing this card until 12:05.",
      current: claimedBy(sam),
    }));
    render(
      <ReviewCard
        batch={makeBatch()}
        viewer={dana}
        onDecide={onDecide}
        onClaim={onClaim}
        now={clock}
      />,
    );
    await act(async () => fireEvent.click(screen.getByTestId("claim-button")));
    expect(screen.getByRole("alert").textContent).toContain("Sam is reviewing");
  });
});
