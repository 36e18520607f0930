// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { createRef } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  ReviewCard,
  type Batch,
  type DecisionRequest,
  type DecisionResult,
  type ReviewCardHandle,
} from "@/components/review-card/index";
import {
  NOW,
  byPolicy,
  clock,
  dana,
  decided,
  decision,
  deferred,
  iso,
  makeBatch,
  makeCall,
  sam,
} from "./review-card-fixtures";

afterEach(cleanup);

type Decide = (req: DecisionRequest) => Promise<DecisionResult>;

function setup(
  batch: Batch,
  decide?: Decide,
  extra: Partial<Parameters<typeof ReviewCard>[0]> = {},
) {
  const onDecide = decide ? vi.fn(decide) : undefined;
  const view = render(
    <ReviewCard batch={batch} viewer={dana} onDecide={onDecide} now={clock} {...extra} />,
  );
  const rerender = (next: Batch) =>
    view.rerender(
      <ReviewCard batch={next} viewer={dana} onDecide={onDecide} now={clock} {...extra} />,
    );
  return { ...view, onDecide, rerender };
}

const ok = (batch: Batch): DecisionResult => ({ ok: true, batch });

describe("ReviewCard: what it shows", () => {
  it("writes exact times in the host's zone and costs in each call's currency", () => {
    const batch = makeBatch({
      calls: [
        makeCall({ id: "c1", costEstimate: 1234.5, costCurrency: "JPY" }),
        makeCall({ id: "c2", toolCallId: "t2", costEstimate: 10, costCurrency: "EUR" }),
        makeCall({ id: "c3", toolCallId: "t3", costEstimate: 2.5, costCurrency: "EUR" }),
      ],
    });
    setup(batch, undefined, { timeZone: "Asia/Kolkata", locale: "en-US" });
    const card = screen.getByTestId("review-card");
    expect(within(card).getByText("est. ¥1,235")).toBeTruthy();
    expect(within(card).getByText("est. ¥1,235 + €12.50 in all")).toBeTruthy();
    const asked = card.querySelector(`time[datetime="${batch.createdAt}"]`)!;
    expect(asked.getAttribute("title")).toMatch(/GMT\+5:30$/);
    const deadline = screen.getByTestId("countdown").querySelector("time")!;
    expect(deadline.getAttribute("title")).toMatch(/GMT\+5:30$/);
    cleanup();
    // another zone, the same instants
    setup(batch, undefined, { timeZone: "America/New_York", locale: "en-US" });
    const again = screen
      .getByTestId("review-card")
      .querySelector(`time[datetime="${batch.createdAt}"]`)!;
    expect(again.getAttribute("title")).toMatch(/E[SD]T$/);
  });

  it("labels an action with its agent, queue, run, cost, risks and deadline", () => {
    const batch = makeBatch({
      calls: [makeCall({ costEstimate: 12.5, risks: ["Money leaves the company"] })],
    });
    setup(batch, undefined, { runHref: (id) => `/runs/${id}` });
    const card = screen.getByTestId("review-card");
    expect(card.getAttribute("data-batch-id")).toBe("batch-1");
    expect(card.getAttribute("data-status")).toBe("pending");
    expect(screen.getByRole("article", { name: "Refund order A-1" })).toBe(card);
    expect(within(card).getByText("Action")).toBeTruthy();
    expect(within(card).getByText("Support bot")).toBeTruthy();
    expect(within(card).getByText("support")).toBeTruthy();
    expect(screen.getByRole("link").getAttribute("href")).toBe("/runs/run-0123456789abcdef");
    expect(within(card).getByText("2 min ago")).toBeTruthy();
    expect(within(card).getByText("refund_order").tagName).toBe("CODE");
    expect(within(card).getByText("est. $12.50")).toBeTruthy();
    expect(within(card).getByText("Money leaves the company")).toBeTruthy();
    expect(within(card).getByText("Pending")).toBeTruthy();

    const countdown = screen.getByTestId("countdown");
    expect(countdown.textContent).toContain("5:00 left");
    expect(countdown.textContent).toContain("Rejected automatically at the deadline");
    expect(countdown.getAttribute("data-urgent")).toBe("false");
    // Ticks every second: never a live region.
    expect(countdown.closest("[aria-live]")).toBeNull();
    expect(countdown.querySelector("[aria-live]")).toBeNull();
  });

  it("marks the last minute as urgent and says what the deadline does", () => {
    setup(makeBatch({ expiresAt: iso(42_000), onTimeout: "approve" }));
    const countdown = screen.getByTestId("countdown");
    expect(countdown.getAttribute("data-urgent")).toBe("true");
    expect(countdown.textContent).toContain("0:42 left");
    expect(countdown.textContent).toContain("Approved automatically at the deadline");
  });

  it("ticks the countdown every second", () => {
    vi.useFakeTimers({ now: NOW });
    try {
      render(<ReviewCard batch={makeBatch()} />);
      expect(screen.getByTestId("countdown").textContent).toContain("5:00 left");
      act(() => void vi.advanceTimersByTime(3_000));
      expect(screen.getByTestId("countdown").textContent).toContain("4:57 left");
    } finally {
      vi.useRealTimers();
    }
  });

  it("shows a plan with its rationale, resources, risks and rollback", () => {
    const plan = {
      summary: "Migrate the billing database",
      rationale: "The old cluster is end-of-life",
      resources: ["db/billing", "svc/invoices"],
      risks: ["Writes pause for 2 minutes"],
      rollback: "Point the app back at the old cluster",
    };
    const batch = makeBatch({
      kind: "plan",
      plan,
      calls: [
        makeCall({ toolCallId: "plan", toolName: "plan", args: plan, summary: plan.summary }),
      ],
    });
    setup(batch, async () => ok(batch));
    expect(screen.getByRole("article", { name: "Migrate the billing database" })).toBeTruthy();
    expect(screen.getByText("Plan")).toBeTruthy();
    for (const text of [
      plan.rationale,
      "db/billing",
      "svc/invoices",
      plan.risks[0]!,
      plan.rollback,
    ]) {
      expect(screen.getByText(text)).toBeTruthy();
    }
    expect(screen.getByRole("button", { name: "Approve plan" })).toBeTruthy();
  });

  it("shows who decided, when and what was edited", () => {
    const batch = decided(
      makeBatch(),
      decision({ by: sam, editedArgs: { orderId: "A-1", amount: 10 }, scope: "run" }),
    );
    setup(batch, async () => ok(batch));
    const notice = screen.getByTestId("decision-notice");
    expect(notice.textContent).toContain("Approved with edits by Sam, 4 s ago");
    expect(notice.textContent).toContain("Remembered for this run.");
    const diff = within(notice).getByTestId("args-diff");
    expect(
      within(diff).getByText('"amount": 10').closest("[data-diff]")?.getAttribute("data-diff"),
    ).toBe("added");
    expect(
      within(diff).getByText('"amount": 25').closest("[data-diff]")?.getAttribute("data-diff"),
    ).toBe("removed");
    expect(screen.getByText("Approved")).toBeTruthy();
    expect(screen.queryByTestId("countdown")).toBeNull();
    expect(screen.queryByTestId("approve-button")).toBeNull();
  });

  it("quotes a rejection's reason", () => {
    const batch = decided(
      makeBatch(),
      decision({ outcome: "rejected", by: sam, reason: "Too large" }),
    );
    setup(batch);
    const notice = screen.getByTestId("decision-notice");
    expect(notice.textContent).toContain("Rejected by Sam, 4 s ago");
    expect(within(notice).getByText("Too large")).toBeTruthy();
  });

  it("says which policy rule or agent mode settled each call", () => {
    const calls = [
      makeCall({ id: "c-rule", toolName: "write_file" }),
      makeCall({ id: "c-allow", toolName: "send_email" }),
      makeCall({ id: "c-off", toolName: "delete_branch" }),
      makeCall({ id: "c-deny", toolName: "refund_order" }),
    ];
    let batch = makeBatch({ calls });
    batch = decided(batch, byPolicy(), "c-rule");
    batch = decided(batch, byPolicy({ effect: "ask", rule: null, agentMode: "allow" }), "c-allow");
    batch = decided(batch, byPolicy({ rule: null, agentMode: "off" }), "c-off");
    batch = decided(
      batch,
      byPolicy(
        { effect: "ask", rule: null, agentMode: "deny" },
        { outcome: "rejected", reason: "Not approved: this agent's mode is deny." },
      ),
      "c-deny",
    );
    setup(batch, async () => ok(batch));
    const notices = screen.getAllByTestId("decision-notice");
    expect(notices.map((n) => n.getAttribute("data-source"))).toEqual(Array(4).fill("policy"));
    expect(notices.map((n) => n.querySelector("p")?.textContent)).toEqual([
      "Allowed by policy 'Scratch writes', 4 s ago",
      "Approved: the agent's mode is allow, 4 s ago",
      "Approved: the agent's gate is off, 4 s ago",
      "Rejected: the agent's mode is deny, 4 s ago",
    ]);
    expect(notices[3]!.getAttribute("data-outcome")).toBe("rejected");
    expect(notices[3]!.textContent).toContain("rejects its calls that would need a reviewer");
    // The server's reason only restates the mode: not quoted.
    expect(notices[3]!.querySelector("blockquote")).toBeNull();
    expect(screen.queryByTestId("approve-button")).toBeNull();
  });

  it("is read-only without onDecide", () => {
    const batch = makeBatch({
      calls: [makeCall(), makeCall({ id: "call-2", toolName: "send_email" })],
    });
    render(<ReviewCard batch={batch} now={clock} onDecideBatch={async () => ok(batch)} />);
    for (const id of [
      "approve-button",
      "reject-button",
      "edit-button",
      "scope-select",
      "approve-all",
    ]) {
      expect(screen.queryByTestId(id)).toBeNull();
    }
    expect(screen.queryByRole("button", { name: /approve|reject|edit/i })).toBeNull();
    expect(screen.getAllByTestId("call-row")).toHaveLength(2);
  });

  it("shows votes toward a quorum and hides controls once the viewer voted", () => {
    const batch = makeBatch({
      calls: [
        makeCall({
          requiredApprovals: 2,
          votes: [{ reviewer: dana, outcome: "approved", revision: 1, at: iso(-1000) }],
        }),
      ],
    });
    setup(batch, async () => ok(batch));
    const votes = screen.getByTestId("votes");
    expect(votes.textContent).toContain("1 of 2 approvals");
    expect(votes.textContent).toContain("Dana (you)");
    expect(votes.textContent).toContain("waiting for 1 more approval");
    expect(screen.queryByTestId("approve-button")).toBeNull();
  });

  it("hides controls once the deadline has passed", () => {
    setup(makeBatch({ expiresAt: iso(-1000) }), async () => ok(makeBatch()));
    expect(screen.getByTestId("countdown").textContent).toContain("Deadline passed");
    expect(screen.queryByTestId("approve-button")).toBeNull();
  });
});

describe("ReviewCard: deciding", () => {
  it("approves with the chosen scope, showing the decision as in flight", async () => {
    const batch = makeBatch();
    const answer = deferred<DecisionResult>();
    const { onDecide } = setup(batch, () => answer.promise);

    fireEvent.change(screen.getByTestId("scope-select"), { target: { value: "run" } });
    fireEvent.click(screen.getByRole("button", { name: "Approve refund_order" }));
    expect(onDecide).toHaveBeenCalledWith({
      callId: "call-1",
      outcome: "approve",
      expectedRevision: 1,
      scope: "run",
    });
    const button = screen.getByTestId("approve-button");
    expect(button.textContent).toBe("Approving…");
    expect((button as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByTestId("reject-button") as HTMLButtonElement).disabled).toBe(true);

    await act(async () => answer.resolve(ok(decided(batch, decision({ by: dana, scope: "run" })))));
    expect(screen.getByTestId("decision-notice").textContent).toContain("Approved by you, 4 s ago");
    expect(screen.getByTestId("review-card").getAttribute("data-status")).toBe("decided");
    expect(screen.queryByTestId("approve-button")).toBeNull();
  });

  it("requires a reason to reject, and sends it", async () => {
    const batch = makeBatch();
    const { onDecide } = setup(batch, async () =>
      ok(decided(batch, decision({ outcome: "rejected", by: dana, reason: "Wrong order" }))),
    );
    fireEvent.click(screen.getByRole("button", { name: "Reject refund_order" }));
    const reason = screen.getByTestId("reject-reason");
    expect(document.activeElement).toBe(reason);

    fireEvent.click(screen.getByTestId("confirm-reject"));
    fireEvent.keyDown(reason, { key: "Enter" });
    expect(onDecide).not.toHaveBeenCalled();
    expect(screen.getByText("Give a reason before rejecting.")).toBeTruthy();

    fireEvent.change(reason, { target: { value: "Wrong order" } });
    // Enter adds a line (the textarea's own behaviour): it must not send.
    await act(async () => void fireEvent.keyDown(reason, { key: "Enter" }));
    expect(onDecide).not.toHaveBeenCalled();
    await act(async () => void fireEvent.keyDown(reason, { key: "Enter", metaKey: true }));
    expect(onDecide).toHaveBeenCalledTimes(1);
    expect(onDecide).toHaveBeenCalledWith({
      callId: "call-1",
      outcome: "reject",
      expectedRevision: 1,
      reason: "Wrong order",
    });
    expect(screen.getByTestId("decision-notice").textContent).toContain("Rejected by you");
  });

  it("edits: refuses invalid JSON and schema errors, then approves the edit with a diff", async () => {
    const inputSchema = {
      type: "object",
      properties: { orderId: { type: "string" }, amount: { type: "number", maximum: 100 } },
      required: ["orderId", "amount"],
      additionalProperties: false,
    };
    const batch = makeBatch({ calls: [makeCall({ inputSchema })] });
    const { onDecide } = setup(batch, async () => ok(batch));
    fireEvent.click(screen.getByRole("button", { name: "Edit refund_order" }));
    const editor = screen.getByTestId("args-editor") as HTMLTextAreaElement;
    expect(JSON.parse(editor.value)).toEqual({ orderId: "A-1", amount: 25 });
    const confirm = () => screen.getByTestId("confirm-edit") as HTMLButtonElement;
    expect(confirm().disabled).toBe(true); // nothing changed yet

    fireEvent.change(editor, { target: { value: '{\n  "orderId": "A-1",\n  "amount": \n}' } });
    expect(screen.getByTestId("editor-error").textContent).toContain("Invalid JSON");
    expect(screen.getByTestId("editor-error").textContent).toContain("line 4, column 1");
    expect(confirm().disabled).toBe(true);

    fireEvent.change(editor, { target: { value: '{ "orderId": "A-1", "amount": 500, "x": 1 }' } });
    const errors = screen.getByTestId("editor-error").textContent;
    expect(errors).toContain("amount must be <= 100");
    expect(errors).toContain('must not have the property "x"');
    expect(confirm().disabled).toBe(true);
    fireEvent.click(confirm());
    expect(onDecide).not.toHaveBeenCalled();

    fireEvent.change(editor, { target: { value: '{ "orderId": "A-1", "amount": 50 }' } });
    expect(screen.queryByTestId("editor-error")).toBeNull();
    const diff = screen.getByTestId("args-diff");
    expect(
      within(diff).getByText('"amount": 50').closest("[data-diff]")?.getAttribute("data-diff"),
    ).toBe("added");
    expect(
      within(diff).getByText('"amount": 25').closest("[data-diff]")?.getAttribute("data-diff"),
    ).toBe("removed");
    fireEvent.change(within(editor.closest("form")!).getByTestId("scope-select"), {
      target: { value: "conversation" },
    });
    await act(async () => void fireEvent.click(confirm()));
    expect(onDecide).toHaveBeenCalledWith({
      callId: "call-1",
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { orderId: "A-1", amount: 50 },
      scope: "conversation",
    });
  });

  it("shows 'already decided' in place, from the current call, and keeps it across updates", async () => {
    const batch = makeBatch();
    const current = decided(batch, decision({ by: sam }));
    const { rerender } = setup(batch, async () => ({
      ok: false,
      code: "already_decided",
      message: "Approved by Sam 4 s ago.",
      current,
    }));
    await act(async () => void fireEvent.click(screen.getByTestId("approve-button")));
    const notice = screen.getByTestId("conflict-notice");
    expect(notice.textContent).toBe("Your approval was not recorded: Sam approved it 4 s ago.");
    // nothing more to say about Sam's approval: no empty box below the sentence
    expect(screen.queryByTestId("decision-notice")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.queryByTestId("approve-button")).toBeNull();
    expect(screen.getByTestId("call-row").getAttribute("data-status")).toBe("approved");
    expect(document.activeElement).toBe(notice);

    // The host then passes the batch it heard about on the stream: the notice stays.
    rerender(structuredClone(current));
    expect(screen.getByTestId("conflict-notice").textContent).toContain("Sam approved it");
  });

  it("a lost edit says it was not applied, keeps the JSON copyable, and shows no empty box", async () => {
    const batch = makeBatch({ calls: [makeCall({ args: { orderId: "A-1", amount: 42 } })] });
    const current = decided(batch, decision({ by: sam }));
    setup(batch, async () => ({
      ok: false,
      code: "already_decided",
      message: "Approved by Sam 4 s ago.",
      current,
    }));
    fireEvent.click(screen.getByTestId("edit-button"));
    fireEvent.change(screen.getByTestId("args-editor"), {
      target: { value: '{ "orderId": "A-1", "amount": 30 }' },
    });
    await act(async () => void fireEvent.click(screen.getByTestId("confirm-edit")));
    expect(screen.getByTestId("race-sentence").textContent).toBe(
      "Your edit (amount 30) was not applied: Sam approved the original (amount 42) 4 s ago.",
    );
    const kept = screen.getByTestId("unsent-draft-text") as HTMLTextAreaElement;
    expect(JSON.parse(kept.value)).toEqual({ orderId: "A-1", amount: 30 });
    expect(screen.getByRole("textbox", { name: "Your unapplied edit (JSON)" })).toBe(kept);
    expect(screen.getByRole("button", { name: "Copy" })).toBeTruthy();
    expect(screen.queryByTestId("decision-notice")).toBeNull();
    expect(screen.getByRole("status").textContent).toBe(
      screen.getByTestId("race-sentence").textContent,
    );
    fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByTestId("conflict-notice")).toBeNull();
  });

  it("a lost 'Reject all' says what was decided and keeps the reason", async () => {
    const batch = makeBatch({
      calls: [makeCall(), makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email" })],
    });
    const current = decided(
      decided(batch, decision({ by: sam }), "call-1"),
      decision({ by: sam }),
      "call-2",
    );
    render(
      <ReviewCard
        batch={batch}
        viewer={dana}
        now={clock}
        onDecide={async () => ok(batch)}
        onDecideBatch={async () => ({
          ok: false,
          code: "already_decided",
          message: "Nothing was decided: Approved by Sam 0 s ago.",
          current,
        })}
      />,
    );
    fireEvent.click(screen.getByTestId("reject-all"));
    fireEvent.change(screen.getByTestId("reject-all-reason"), {
      target: { value: "Fraud ring" },
    });
    await act(async () => void fireEvent.click(screen.getByTestId("confirm-reject-all")));
    expect(screen.getByTestId("race-sentence").textContent).toBe(
      "Your rejection of both calls was not recorded: Sam approved both 4 s ago.",
    );
    expect((screen.getByTestId("unsent-draft-text") as HTMLTextAreaElement).value).toBe(
      "Fraud ring",
    );
    expect(screen.queryByTestId("decide-rest")).toBeNull();
    // no empty green boxes under the calls either
    for (const notice of screen.getAllByTestId("decision-notice"))
      expect(notice.textContent).not.toBe("");
  });

  it("a 'Reject all' that lost to the viewer's own approval offers to reject the rest", async () => {
    const batch = makeBatch({
      calls: [
        makeCall(),
        makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email" }),
        makeCall({ id: "call-3", toolCallId: "tc-3", toolName: "close_ticket" }),
      ],
    });
    const current = decided(batch, decision({ by: dana }), "call-1");
    const onDecide = vi.fn(async (request: DecisionRequest) =>
      ok(decided(current, decision({ by: dana, outcome: "rejected" }), request.callId)),
    );
    render(
      <ReviewCard
        batch={batch}
        viewer={dana}
        now={clock}
        onDecide={onDecide}
        onDecideBatch={async () => ({
          ok: false,
          code: "already_decided",
          message: "Nothing was decided: Approved by Dana 0 s ago.",
          current,
        })}
      />,
    );
    fireEvent.click(screen.getByTestId("reject-all"));
    fireEvent.change(screen.getByTestId("reject-all-reason"), { target: { value: "Too late" } });
    await act(async () => void fireEvent.click(screen.getByTestId("confirm-reject-all")));
    expect(screen.getByTestId("race-sentence").textContent).toBe(
      "Your rejection of all 3 calls was not recorded: you had already approved refund_order 4 s ago, so nothing else was decided and 2 calls are still open.",
    );
    const rest = screen.getByTestId("decide-rest");
    expect(rest.textContent).toBe("Reject the other 2 with this reason");
    await act(async () => void fireEvent.click(rest));
    expect(onDecide.mock.calls.map(([request]) => request)).toEqual([
      { callId: "call-2", outcome: "reject", expectedRevision: 1, reason: "Too late" },
      { callId: "call-3", outcome: "reject", expectedRevision: 1, reason: "Too late" },
    ]);
    expect(screen.queryByTestId("conflict-notice")).toBeNull();
  });

  it("a 'Reject all' reason being typed stays when the viewer's own held approval lands", () => {
    const batch = makeBatch({
      calls: [makeCall(), makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email" })],
    });
    const props = {
      viewer: dana,
      now: clock,
      onDecide: async () => ok(batch),
      onDecideBatch: async () => ok(batch),
    };
    const { rerender } = render(<ReviewCard batch={batch} {...props} />);
    fireEvent.click(screen.getByTestId("reject-all"));
    fireEvent.change(screen.getByTestId("reject-all-reason"), { target: { value: "Stop it" } });
    rerender(<ReviewCard batch={decided(batch, decision({ by: dana }))} {...props} />);
    expect(screen.queryByTestId("reject-all-reason")).toBeNull();
    expect(screen.getByTestId("race-sentence").textContent).toBe(
      "Your rejection of both calls was not recorded: you had already approved refund_order 4 s ago, so nothing else was decided and 1 call is still open.",
    );
    expect((screen.getByTestId("unsent-draft-text") as HTMLTextAreaElement).value).toBe("Stop it");
    expect(screen.getByTestId("decide-rest").textContent).toBe(
      "Reject the other call with this reason",
    );
  });

  it("keeps no draft after the viewer's own 'Reject all' succeeded", async () => {
    const batch = makeBatch({
      calls: [makeCall(), makeCall({ id: "call-2", toolCallId: "tc-2", toolName: "send_email" })],
    });
    const rejected = decision({ by: dana, outcome: "rejected", reason: "Stop it" });
    const done = decided(decided(batch, rejected, "call-1"), rejected, "call-2");
    render(
      <ReviewCard
        batch={batch}
        viewer={dana}
        now={clock}
        onDecide={async () => ok(batch)}
        onDecideBatch={async () => ok(done)}
      />,
    );
    fireEvent.click(screen.getByTestId("reject-all"));
    fireEvent.change(screen.getByTestId("reject-all-reason"), { target: { value: "Stop it" } });
    await act(async () => void fireEvent.click(screen.getByTestId("confirm-reject-all")));
    expect(screen.queryByTestId("conflict-notice")).toBeNull();
    expect(screen.queryByTestId("unsent-draft-text")).toBeNull();
  });

  it("merges a call returned as `current` into the batch", async () => {
    const batch = makeBatch();
    const call = decided(batch, decision({ by: sam, outcome: "rejected", reason: "no" })).calls[0]!;
    setup(batch, async () => ({ ok: false, code: "already_decided", message: "x", current: call }));
    await act(async () => void fireEvent.click(screen.getByTestId("approve-button")));
    expect(screen.getByTestId("conflict-notice").textContent).toBe(
      "Your approval was not recorded: Sam rejected it 4 s ago.",
    );
    // the winner's reason once, below, said to be theirs
    expect(screen.getByTestId("decision-notice").textContent).toBe("Sam's reason:no");
  });

  it("on stale_revision shows the new version with its controls", async () => {
    const batch = makeBatch();
    const current = makeBatch({
      calls: [makeCall({ revision: 3, pendingEdit: { orderId: "A-1", amount: 20 } })],
    });
    let calls = 0;
    const { onDecide } = setup(batch, async () =>
      ++calls === 1
        ? { ok: false, code: "stale_revision", message: "stale", current }
        : ok(decided(current, decision())),
    );
    await act(async () => void fireEvent.click(screen.getByTestId("approve-button")));
    expect(screen.getByTestId("conflict-notice").textContent).toBe(
      "Your approval was not recorded: it was edited (amount 20); review the edit before deciding.",
    );
    expect(screen.getByText(/approving now approves these args/)).toBeTruthy();
    await act(async () => void fireEvent.click(screen.getByTestId("approve-button")));
    expect(onDecide).toHaveBeenLastCalledWith(expect.objectContaining({ expectedRevision: 3 }));
    expect(screen.queryByTestId("conflict-notice")).toBeNull();
  });

  it("shows other failures as an alert and keeps what was typed", async () => {
    setup(makeBatch(), async () => ({
      ok: false,
      code: "forbidden",
      message: "Separation of duties: someone else must decide.",
    }));
    fireEvent.click(screen.getByTestId("reject-button"));
    fireEvent.change(screen.getByTestId("reject-reason"), { target: { value: "Not today" } });
    await act(async () => void fireEvent.click(screen.getByTestId("confirm-reject")));
    expect(screen.getByRole("alert").textContent).toBe(
      "Separation of duties: someone else must decide.",
    );
    expect((screen.getByTestId("reject-reason") as HTMLTextAreaElement).value).toBe("Not today");
    expect(screen.queryByTestId("conflict-notice")).toBeNull();
  });

  it("reports a thrown onDecide as an error, not a crash", async () => {
    setup(makeBatch(), async () => {
      throw new Error("offline");
    });
    await act(async () => void fireEvent.click(screen.getByTestId("approve-button")));
    expect(screen.getByRole("alert").textContent).toContain("offline");
    expect(screen.getByTestId("approve-button").textContent).toBe("Approve");
  });

  it("approves or rejects all pending calls with every revision", async () => {
    const batch = makeBatch({
      calls: [
        makeCall(),
        makeCall({ id: "call-2", toolName: "send_email", revision: 2 }),
        makeCall({ id: "call-3", toolName: "refund_order" }),
      ],
    });
    const onDecideBatch = vi.fn(async () => ok(batch));
    render(
      <ReviewCard
        batch={batch}
        viewer={dana}
        now={clock}
        onDecide={async () => ok(batch)}
        onDecideBatch={onDecideBatch}
      />,
    );
    // Repeated tool names are numbered so each button has its own name.
    expect(screen.getByRole("button", { name: "Approve refund_order #2" })).toBeTruthy();

    await act(async () => void fireEvent.click(screen.getByTestId("approve-all")));
    expect(onDecideBatch).toHaveBeenCalledWith({
      batchId: "batch-1",
      outcome: "approve",
      expectedRevisions: { "call-1": 1, "call-2": 2, "call-3": 1 },
    });

    fireEvent.click(screen.getByTestId("reject-all"));
    fireEvent.click(screen.getByTestId("confirm-reject-all"));
    expect(onDecideBatch).toHaveBeenCalledTimes(1);
    fireEvent.change(screen.getByTestId("reject-all-reason"), { target: { value: "Duplicate" } });
    await act(async () => void fireEvent.click(screen.getByTestId("confirm-reject-all")));
    expect(onDecideBatch).toHaveBeenLastCalledWith(
      expect.objectContaining({ outcome: "reject", reason: "Duplicate" }),
    );
  });

  it("offers no approve-all once a call is settled", () => {
    const batch = decided(
      makeBatch({ calls: [makeCall(), makeCall({ id: "call-2" }), makeCall({ id: "call-3" })] }),
      decision(),
    );
    render(
      <ReviewCard
        batch={batch}
        now={clock}
        onDecide={async () => ok(batch)}
        onDecideBatch={async () => ok(batch)}
      />,
    );
    expect(screen.queryByTestId("approve-all")).toBeNull();
    expect(screen.getAllByTestId("approve-button")).toHaveLength(2);
  });
});

describe("ReviewCard: the keyboard handle", () => {
  it("approves, opens the reason field and the editor of the first pending call", async () => {
    const batch = makeBatch({
      calls: [
        decided(makeBatch(), decision()).calls[0]!,
        makeCall({ id: "call-2", toolName: "send_email" }),
      ],
    });
    const ref = createRef<ReviewCardHandle>();
    const onDecide = vi.fn(async () => ok(batch));
    render(
      <ReviewCard batch={batch} viewer={dana} now={clock} onDecide={onDecide} ref={ref} selected />,
    );
    expect(screen.getByTestId("review-card").getAttribute("data-selected")).toBe("true");

    await act(async () => ref.current!.approve());
    expect(onDecide).toHaveBeenCalledWith(
      expect.objectContaining({ callId: "call-2", outcome: "approve" }),
    );

    act(() => ref.current!.reject());
    expect(document.activeElement).toBe(screen.getByTestId("reject-reason"));
    fireEvent.keyDown(screen.getByTestId("reject-reason"), { key: "Escape" });
    expect(screen.queryByTestId("reject-reason")).toBeNull();
    expect(document.activeElement).toBe(screen.getByTestId("reject-button"));

    act(() => ref.current!.edit());
    expect(document.activeElement).toBe(screen.getByTestId("args-editor"));

    act(() => ref.current!.focus());
    expect(document.activeElement).toBe(screen.getByTestId("review-card"));
  });

  it("acts on the focused call, else on the first open one", async () => {
    const batch = makeBatch({
      calls: [makeCall(), makeCall({ id: "call-2", toolName: "send_email" })],
    });
    const ref = createRef<ReviewCardHandle>();
    const onDecide = vi.fn(async () => ok(batch));
    const view = render(<ReviewCard batch={batch} now={clock} onDecide={onDecide} ref={ref} />);
    // Re-renders must not change which call is "first".
    view.rerender(<ReviewCard batch={{ ...batch }} now={clock} onDecide={onDecide} ref={ref} />);
    await act(async () => ref.current!.approve());
    expect(onDecide).toHaveBeenLastCalledWith(expect.objectContaining({ callId: "call-1" }));

    screen.getAllByTestId("call-row")[1]!.focus();
    await act(async () => ref.current!.approve());
    expect(onDecide).toHaveBeenLastCalledWith(expect.objectContaining({ callId: "call-2" }));
  });
});
