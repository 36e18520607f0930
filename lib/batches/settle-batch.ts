import { batches, runs, type BatchOutcome } from "@/db/schema";
import { changedRow, guard, updateRow, type Statement } from "@/db/write-batch";
import {
  assembleBatchViews,
  forReviewers,
  type BatchView,
  type BatchViewRows,
} from "@/lib/read-models/batch-run-views";
import { eventRows, type EventActor } from "@/lib/events/append-event";
import { webhookRow } from "@/lib/webhooks/enqueue-webhook";

/**
 * The writes that follow decisions planned on `rows` (one batch, as read and then edited by the
 * planner): once no call is pending the batch settles — `decided` (or `expired`) with its outcome,
 * its event, its run `ready` to be claimed, its webhook queued — and the rows show it settled.
 * While calls are still pending, a guard keeps it so: if another reviewer decided the last of them
 * meanwhile, each of the two would leave the settling to the other, so the batch aborts instead
 * and the retry settles it.
 */
export function planSettlement(
  rows: BatchViewRows,
  actor: EventActor,
  now: number,
  settleAs: "decided" | "expired" = "decided",
): Statement[] {
  return settlementOf(rows, actor, now, settleAs).writes;
}

/**
 * planSettlement's writes, and the agent's view of the batch when they settle it (the view its
 * event and webhook carry), else null: a verb that answers with the settled batch answers with
 * this view (`forReviewers` of it, for a reviewer) instead of assembling the same view again.
 */
export function settlementOf(
  rows: BatchViewRows,
  actor: EventActor,
  now: number,
  settleAs: "decided" | "expired" = "decided",
): { writes: Statement[]; agentView: BatchView | null } {
  const row = rows.batchRows[0]!;
  const batch = row.batch;
  const batchCalls = rows.callRows.map((r) => r.call);
  const pending = batchCalls.filter((call) => call.status === "pending").length;
  if (batch.status !== "pending") return { writes: [], agentView: null };
  if (pending > 0) {
    const writes = [
      guard(
        "(select count(*) from calls where batch_id = ? and status = 'pending') = ?",
        batch.id,
        pending,
      ),
    ];
    return { writes, agentView: null };
  }
  const outcome: BatchOutcome = batchCalls.every((c) => c.decisionOutcome === "approved")
    ? "approved"
    : batchCalls.some((c) => c.decisionOutcome === "approved")
      ? "mixed"
      : "rejected";
  row.batch = { ...batch, status: settleAs, outcome, decidedAt: now };
  const [agentView] = assembleBatchViews(rows, [batch.id], "agent");
  const type = settleAs === "expired" ? "batch.expired" : "batch.decided";
  // A batch policy blocked whole is logged for its run only: no reviewer stream carries it.
  const hidden = batch.hiddenFromReviewers;
  const writes = [
    updateRow(
      batches,
      { status: settleAs, outcome, decidedAt: now },
      "id = ? and status = 'pending' and not exists (select 1 from calls where batch_id = ? and status = 'pending')",
      batch.id,
      batch.id,
    ),
    changedRow(),
    eventRows({
      type,
      runId: batch.runId,
      batchId: batch.id,
      queueId: hidden ? null : batch.queueId,
      actor,
      data: { outcome, batch: hidden ? agentView! : forReviewers(agentView!) },
      at: now,
    }),
    releaseRunStatement(batch.runId, "ready", now),
    // The webhook goes to the agent: its view includes the calls a policy blocked.
    ...(batch.callbackUrl ? [webhookRow(batch, type, agentView!, now)] : []),
  ];
  return { writes, agentView: agentView! };
}

/**
 * Moves a waiting run on once it has no pending batch left: to `ready` (a batch settled, the run
 * is to be claimed) or back to `running` (the agent withdrew its batch and holds the run again).
 */
export function releaseRunStatement(
  runId: string,
  status: "ready" | "running",
  now: number,
): Statement {
  return updateRow(
    runs,
    { status, updatedAt: now },
    "id = ? and status = 'waiting_approval' and not exists (select 1 from batches where run_id = ? and status = 'pending')",
    runId,
    runId,
  );
}
