// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useTransition } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { RowConfirm, useConfirmRows } from "@/components/queue-settings/confirm-action";

// The one row-confirm of the admin tables (Agents, Tokens, People, MCP gateways): one question
// open at a time, the action run in the page's transition, and the keyboard kept where it was.

afterEach(cleanup);

function Table({ onConfirm }: { onConfirm: (name: string) => Promise<void> }) {
  const rows = useConfirmRows(useTransition());
  return (
    <>
      {["Billing bot", "Support bot"].map((name) => (
        <div key={name} data-testid={name}>
          <RowConfirm
            row={name}
            verb="Revoke"
            ariaLabel={`Revoke the key of ${name}`}
            rows={rows}
            onConfirm={() => onConfirm(name)}
          />
        </div>
      ))}
    </>
  );
}

describe("RowConfirm", () => {
  it("asks in one row at a time, naming the question for screen readers", () => {
    render(<Table onConfirm={async () => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "Revoke the key of Billing bot" }));
    expect(screen.getByRole("group", { name: "Revoke the key of Billing bot?" })).toBeTruthy();
    expect(screen.getAllByRole("button", { name: "Revoke now" })).toHaveLength(1);

    fireEvent.click(screen.getByRole("button", { name: "Revoke the key of Support bot" }));
    expect(screen.queryByRole("group", { name: "Revoke the key of Billing bot?" })).toBeNull();
    expect(screen.getByRole("group", { name: "Revoke the key of Support bot?" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Revoke the key of Billing bot" })).toBeTruthy();
  });

  it("puts the focus on Keep when it asks; Escape keeps and gives the focus back", () => {
    render(<Table onConfirm={async () => {}} />);
    const ask = screen.getByRole("button", { name: "Revoke the key of Billing bot" });
    ask.focus();
    fireEvent.click(ask);
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Keep" }));

    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(screen.queryByRole("button", { name: "Revoke now" })).toBeNull();
    expect(document.activeElement).toBe(
      screen.getByRole("button", { name: "Revoke the key of Billing bot" }),
    );

    fireEvent.click(screen.getByRole("button", { name: "Revoke the key of Billing bot" }));
    fireEvent.click(screen.getByRole("button", { name: "Keep" }));
    expect(document.activeElement).toBe(
      screen.getByRole("button", { name: "Revoke the key of Billing bot" }),
    );
  });

  it("runs the action once, disabled while it runs, and closes the question when it is done", async () => {
    let finish!: () => void;
    const onConfirm = vi.fn(() => new Promise<void>((resolve) => (finish = resolve)));
    render(<Table onConfirm={onConfirm} />);
    fireEvent.click(screen.getByRole("button", { name: "Revoke the key of Support bot" }));
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Revoke now" }));
    });
    expect(onConfirm).toHaveBeenCalledWith("Support bot");
    const now = screen.getByRole("button", { name: "Revoke now" }) as HTMLButtonElement;
    expect(now.disabled).toBe(true);
    // the other rows wait too: the page's transition is pending
    expect(
      (screen.getByRole("button", { name: "Revoke the key of Billing bot" }) as HTMLButtonElement)
        .disabled,
    ).toBe(true);

    await act(async () => finish());
    expect(screen.queryByRole("button", { name: "Revoke now" })).toBeNull();
    expect(onConfirm).toHaveBeenCalledTimes(1);
  });
});
