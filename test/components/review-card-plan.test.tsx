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
  clock,
  dana,
  decided,
  decision,
  iso,
  makeBatch,
  makeCall,
  makePlanBatch,
  migrationPlan,
  sam,
} from "./review-card-fixtures";

// A plan batch's reviewer may change only the summary: the card edits it as prose and sends the
// plan with the new summary through the ordinary edit decision.

afterEach(cleanup);

const ok = (batch: Batch): DecisionResult => ({ ok: true, batch });

function setup(batch: Batch, answer: (req: DecisionRequest) => Promise<DecisionResult>) {
  const onDecide = vi.fn(answer);
  const ref = createRef<ReviewCardHandle>();
  render(<ReviewCard batch={batch} viewer={dana} onDecide={onDecide} now={clock} ref={ref} />);
  return { onDecide, ref };
}

const editor = () => screen.getByTestId("summary-editor") as HTMLTextAreaElement;
const confirm = () => screen.getByTestId("confirm-edit") as HTMLButtonElement;
const NEW_SUMMARY = "Migrate the billing database, after the month-end close";

describe("ReviewCard: a plan's summary", () => {
  it("edits the summary as prose and sends the plan with only the summary changed", async () => {
    const batch = makePlanBatch();
    const edited = decided(
      batch,
      decision({ by: dana, editedArgs: { ...migrationPlan, summary: NEW_SUMMARY } }),
    );
    const { onDecide } = setup(batch, async () => ok(edited));

    fireEvent.click(screen.getByRole("button", { name: "Edit plan summary" }));
    expect(screen.queryByTestId("args-editor")).toBeNull();
    expect(document.activeElement).toBe(editor());
    expect(editor().value).toBe(migrationPlan.summary);
    expect(confirm().disabled).toBe(true); // nothing changed yet

    fireEvent.change(editor(), { target: { value: `  ${NEW_SUMMARY}\n` } });
    expect(screen.queryByTestId("editor-error")).toBeNull();
    expect(confirm().disabled).toBe(false);
    await act(async () => void fireEvent.keyDown(editor(), { key: "Enter", ctrlKey: true }));

    expect(onDecide).toHaveBeenCalledTimes(1);
    const request = onDecide.mock.calls[0]![0];
    expect(request).toEqual({
      callId: "call-1",
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { ...migrationPlan, summary: NEW_SUMMARY },
      scope: "once",
    });
    // Every other part of the plan is exactly what the agent proposed.
    const { summary, ...rest } = (request as { editedArgs: Record<string, unknown> }).editedArgs;
    const { summary: proposed, ...proposedRest } = migrationPlan;
    expect([summary, proposed]).toEqual([NEW_SUMMARY, migrationPlan.summary]);
    expect(rest).toEqual(proposedRest);

    // Afterwards the card shows the new summary as prose, with the agent's for comparison.
    const notice = screen.getByTestId("decision-notice");
    const shown = within(notice).getByTestId("edited-summary");
    expect(within(shown).getByText("Summary edited by you:")).toBeTruthy();
    expect(within(shown).getByText(NEW_SUMMARY).tagName).toBe("BLOCKQUOTE");
    expect(within(shown).getByTestId("proposed-summary").textContent).toBe(migrationPlan.summary);
    expect(within(notice).queryByTestId("args-diff")).toBeNull();
  });

  it("refuses an empty or too long summary before sending", async () => {
    const { onDecide } = setup(makePlanBatch(), async () => ok(makePlanBatch()));
    fireEvent.click(screen.getByTestId("edit-button"));

    fireEvent.change(editor(), { target: { value: "   \n " } });
    expect(screen.getByTestId("editor-error").textContent).toBe("The summary cannot be empty.");
    expect(editor().getAttribute("aria-invalid")).toBe("true");
    expect(editor().getAttribute("aria-describedby")).toBe(screen.getByTestId("editor-error").id);
    expect(confirm().disabled).toBe(true);
    await act(async () => void fireEvent.keyDown(editor(), { key: "Enter", ctrlKey: true }));
    await act(async () => void fireEvent.submit(editor().closest("form")!));

    // The limit is the server's (the call's input schema), counted in characters, not UTF-16 units.
    fireEvent.change(editor(), { target: { value: "é".repeat(3999) + "🙂" } });
    expect(screen.queryByTestId("editor-error")).toBeNull();
    fireEvent.change(editor(), { target: { value: "x".repeat(4002) } });
    expect(screen.getByTestId("editor-error").textContent).toBe(
      "The summary is 2 characters too long (at most 4000).",
    );
    expect(confirm().disabled).toBe(true);
    await act(async () => void fireEvent.keyDown(editor(), { key: "Enter", metaKey: true }));
    expect(onDecide).not.toHaveBeenCalled();
  });

  it("cancels with Escape, back on the Edit button, sending nothing", () => {
    const { onDecide, ref } = setup(makePlanBatch(), async () => ok(makePlanBatch()));
    act(() => ref.current!.edit());
    expect(document.activeElement).toBe(editor());
    fireEvent.change(editor(), { target: { value: NEW_SUMMARY } });
    fireEvent.keyDown(editor(), { key: "Escape" });
    expect(screen.queryByTestId("summary-editor")).toBeNull();
    expect(document.activeElement).toBe(screen.getByRole("button", { name: "Edit plan summary" }));
    expect(onDecide).not.toHaveBeenCalled();

    // Reopened, it starts again from the agent's summary.
    fireEvent.click(screen.getByTestId("edit-button"));
    expect(editor().value).toBe(migrationPlan.summary);
  });

  it("shows a pending edit under a quorum as prose, naming its author", () => {
    const batch = makePlanBatch(migrationPlan, {
      revision: 2,
      requiredApprovals: 2,
      pendingEdit: { ...migrationPlan, summary: NEW_SUMMARY },
      votes: [{ reviewer: sam, outcome: "approved", revision: 2, at: iso(-3_000) }],
    });
    setup(batch, async () => ok(batch));
    const shown = screen.getByTestId("edited-summary");
    expect(shown.textContent).toContain(
      "Summary edited by Sam (revision 2): approving now approves the plan with this summary.",
    );
    expect(within(shown).getByText(NEW_SUMMARY)).toBeTruthy();
    expect(screen.queryByTestId("args-diff")).toBeNull();

    // Editing starts from the pending summary.
    fireEvent.click(screen.getByTestId("edit-button"));
    expect(editor().value).toBe(NEW_SUMMARY);
  });

  it("names the reviewer who edited a decided plan", () => {
    const batch = decided(
      makePlanBatch(),
      decision({ by: sam, editedArgs: { ...migrationPlan, summary: NEW_SUMMARY } }),
    );
    render(<ReviewCard batch={batch} viewer={dana} now={clock} />);
    const notice = screen.getByTestId("decision-notice");
    expect(notice.textContent).toContain("Approved with edits by Sam, 4 s ago");
    expect(notice.textContent).toContain(`Summary edited by Sam:${NEW_SUMMARY}`);
  });
});

describe("ReviewCard: a plan's own controls", () => {
  it("names every control after the plan, in visible text and accessible name alike", () => {
    setup(makePlanBatch(), async () => ok(makePlanBatch()));
    const group = screen.getByRole("group", { name: "Decide the plan" });
    const names = within(group)
      .getAllByRole("button")
      .map((button) => [button.getAttribute("aria-label"), button.textContent]);
    expect(names).toEqual([
      ["Approve plan", "Approve plan"],
      ["Reject plan", "Reject plan"],
      ["Edit plan summary", "Edit plan summary"],
    ]);
    fireEvent.click(screen.getByRole("button", { name: "Reject plan" }));
    expect(screen.getByRole("textbox", { name: /^Reason for rejecting the plan/ })).toBeTruthy();
  });

  it("approves the plan itself, not a step, with Approve plan", async () => {
    const batch = makePlanBatch();
    const { onDecide } = setup(batch, async () => ok(decided(batch, decision({ by: dana }))));
    await act(
      async () => void fireEvent.click(screen.getByRole("button", { name: "Approve plan" })),
    );
    expect(onDecide).toHaveBeenCalledWith(
      expect.objectContaining({ callId: "call-1", outcome: "approve", expectedRevision: 1 }),
    );
  });

  it("a plan sent with its steps as calls: steps are named as steps, the plan is decided whole", () => {
    const batch = makeBatch({
      kind: "plan",
      plan: migrationPlan,
      calls: [
        makeCall({ id: "c-1", toolCallId: "s1", toolName: "snapshot_db", args: {} }),
        makeCall({ id: "c-2", toolCallId: "s2", toolName: "switch_traffic", args: {} }),
      ],
    });
    render(
      <ReviewCard
        batch={batch}
        viewer={dana}
        onDecide={async () => ok(batch)}
        onDecideBatch={async () => ok(batch)}
        now={clock}
      />,
    );
    expect(screen.getByRole("button", { name: "Approve step 1: snapshot_db" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Reject step 2: switch_traffic" })).toBeTruthy();
    // no button of a step says "plan", and the plan's own buttons are apart from the steps'
    const whole = screen.getByRole("group", { name: "Decide the whole plan" });
    expect(within(whole).getByRole("button", { name: "Approve plan (all 2 steps)" })).toBeTruthy();
    expect(within(whole).getByRole("button", { name: "Reject plan (all 2 steps)" })).toBeTruthy();
    for (const row of screen.getAllByTestId("call-row"))
      for (const button of within(row).getAllByRole("button"))
        expect(button.getAttribute("aria-label") ?? "").not.toMatch(/plan/);
  });
});
