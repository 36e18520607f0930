// @vitest-environment happy-dom
import { cleanup, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { ReviewCard } from "@/components/review-card/index";
import { shownCost } from "@/components/review-card/cost";
import { clock, decided, decision, makeBatch, makeCall } from "./review-card-fixtures";

afterEach(cleanup);

const refund = { orderId: "1042", amount: 42, currency: "USD", reason: "Damaged" };

describe("shownCost", () => {
  it("is the agent's estimate without an edit", () => {
    expect(shownCost(makeCall({ args: refund, costEstimate: 42 }))).toEqual({
      amount: 42,
      currency: "USD",
    });
    expect(shownCost(makeCall({ costEstimate: null }))).toBeNull();
  });

  it("follows an approved edit of the argument the estimate is", () => {
    const call = makeCall({
      args: refund,
      costEstimate: 42,
      status: "approved",
      decision: decision({ editedArgs: { ...refund, amount: 10 } }),
    });
    expect(shownCost(call)).toEqual({ amount: 10, currency: "USD", before: 42 });
  });

  it("follows a pending edit too, and not a rejected call's", () => {
    const pending = makeCall({
      args: refund,
      costEstimate: 42,
      pendingEdit: { ...refund, amount: 7 },
    });
    expect(shownCost(pending)).toMatchObject({ amount: 7, before: 42 });
    const rejected = makeCall({
      args: refund,
      costEstimate: 42,
      status: "rejected",
      decision: decision({ outcome: "rejected", editedArgs: null }),
    });
    expect(shownCost(rejected)).toEqual({ amount: 42, currency: "USD" });
  });

  it("marks the estimate as pre-edit when the edit cannot be followed", () => {
    // the estimate is no argument (a flat fee), and the edit changed the args
    const call = makeCall({
      args: { paths: ["a", "b"] },
      costEstimate: 3,
      status: "approved",
      decision: decision({ editedArgs: { paths: ["a"] } }),
    });
    expect(shownCost(call)).toEqual({ amount: 3, currency: "USD", beforeEdit: true });
    // an edit that left the cost argument alone keeps the estimate as it is
    const reasonOnly = makeCall({
      args: refund,
      costEstimate: 42,
      status: "approved",
      decision: decision({ editedArgs: { ...refund, reason: "Broken" } }),
    });
    expect(shownCost(reasonOnly)).toEqual({ amount: 42, currency: "USD" });
  });
});

describe("the card after an approved edit", () => {
  it("shows the edited call's cost, in the row and the card's total", () => {
    const batch = makeBatch({
      calls: [
        makeCall({ args: refund, costEstimate: 42 }),
        makeCall({ id: "call-2", toolCallId: "tc-2", args: { note: "x" }, costEstimate: 1 }),
      ],
    });
    const edited = decided(batch, decision({ editedArgs: { ...refund, amount: 10 } }));
    render(<ReviewCard batch={edited} now={clock} />);
    const [first] = screen.getAllByTestId("call-cost");
    expect(first!.textContent).toBe("est. $10.00 (edited; the agent estimated $42.00)");
    expect(screen.getByText(/in all/).textContent).toBe("est. $11.00 in all");
  });
});
