import { and, eq, sql } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { batches, calls, runs } from "@/db/schema";
import { forReviewers, loadBatchView, type BatchView } from "@/lib/api/views";
import { appendEvent, type EventActor } from "@/lib/events/append-event";
import { enqueueBatchWebhook } from "@/lib/webhooks/enqueue-webhook";

const noCallPending = (batchId: string) =>
  sql`not exists (select 1 from ${calls} where ${calls.batchId} = ${batchId} and ${calls.status} = 'pending')`;

// approved when every call was approved, rejected when none was, mixed otherwise
const outcomeOfCalls = (batchId: string) => sql<"approved" | "rejected" | "mixed">`(case
  when not exists (select 1 from ${calls} where ${calls.batchId} = ${batchId} and coalesce(${calls.decisionOutcome}, 'rejected') <> 'approved') then 'approved'
  when not exists (select 1 from ${calls} where ${calls.batchId} = ${batchId} and ${calls.decisionOutcome} = 'approved') then 'rejected'
  else 'mixed' end)`;

/**
 * Settles a pending batch once none of its calls is pending: the batch becomes `decided` (or
 * `expired`), its run becomes `ready` to be claimed, and the webhook is queued. A no-op while a
 * call is still open. Returns the settled batch's view, or null.
 */
export async function settleBatchIfDone(
  tx: Transaction,
  batchId: string,
  actor: EventActor,
  settleAs: "decided" | "expired" = "decided",
): Promise<BatchView | null> {
  const now = Date.now();
  const [batch] = await tx
    .update(batches)
    .set({ status: settleAs, outcome: outcomeOfCalls(batchId), decidedAt: now })
    .where(and(eq(batches.id, batchId), eq(batches.status, "pending"), noCallPending(batchId)))
    .returning();
  if (!batch) return null;

  const agentView = (await loadBatchView(tx, batch.id, "agent"))!;
  const view = forReviewers(agentView);
  const type = settleAs === "expired" ? "batch.expired" : "batch.decided";
  // A batch policy blocked whole is logged for its run only: no reviewer stream carries it.
  const hidden = batch.hiddenFromReviewers;
  await appendEvent(tx, {
    type,
    runId: batch.runId,
    batchId: batch.id,
    queueId: hidden ? null : batch.queueId,
    actor,
    data: { outcome: batch.outcome, batch: hidden ? agentView : view },
    at: now,
  });
  await releaseRunIfSettled(tx, batch.runId, "ready", now);
  // The webhook goes to the agent: its view includes the calls a policy blocked.
  await enqueueBatchWebhook(tx, batch, type, agentView);
  return view;
}

/**
 * Moves a waiting run on once it has no pending batch left: to `ready` (a batch settled, the run
 * is to be claimed) or back to `running` (the agent withdrew its batch and holds the run again).
 */
export async function releaseRunIfSettled(
  tx: Transaction,
  runId: string,
  status: "ready" | "running",
  now: number,
): Promise<void> {
  await tx
    .update(runs)
    .set({ status, updatedAt: now })
    .where(
      and(
        eq(runs.id, runId),
        eq(runs.status, "waiting_approval"),
        sql`not exists (select 1 from ${batches} where ${batches.runId} = ${runId} and ${batches.status} = 'pending')`,
      ),
    );
}
