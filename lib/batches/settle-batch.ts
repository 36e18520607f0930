import { and, eq, sql } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { batches, calls, runs, type Batch, type BatchOutcome } from "@/db/schema";
import { appendEvent, type EventActor } from "@/lib/events/append-event";
import { loadBatchView } from "@/lib/api/views";
import { enqueueBatchWebhook } from "@/lib/webhooks/enqueue-webhook";

export function outcomeOf(callOutcomes: ("approved" | "rejected" | null)[]): BatchOutcome {
  if (callOutcomes.every((o) => o === "approved")) return "approved";
  if (callOutcomes.every((o) => o === "rejected" || o === null)) return "rejected";
  return "mixed";
}

/**
 * Settles a pending batch once none of its calls is pending: the batch becomes `decided` (or
 * `expired`), its run becomes `ready` to be claimed, and the webhook is queued. A no-op while a
 * call is still open. Returns the settled batch row, or null.
 */
export async function settleBatchIfDone(
  tx: Transaction,
  batchId: string,
  actor: EventActor,
  settleAs: "decided" | "expired" = "decided",
): Promise<Batch | null> {
  const callRows = await tx
    .select({ status: calls.status, outcome: calls.decisionOutcome })
    .from(calls)
    .where(eq(calls.batchId, batchId));
  if (callRows.some((c) => c.status === "pending")) return null;

  const now = Date.now();
  const [batch] = await tx
    .update(batches)
    .set({ status: settleAs, outcome: outcomeOf(callRows.map((c) => c.outcome)), decidedAt: now })
    .where(and(eq(batches.id, batchId), eq(batches.status, "pending")))
    .returning();
  if (!batch) return null;

  const view = await loadBatchView(tx, batch.id);
  await appendEvent(tx, {
    type: settleAs === "expired" ? "batch.expired" : "batch.decided",
    runId: batch.runId,
    batchId: batch.id,
    queueId: batch.queueId,
    actor,
    data: { outcome: batch.outcome, batch: view },
    at: now,
  });
  await releaseRunIfSettled(tx, batch.runId, "ready", now);
  await enqueueBatchWebhook(tx, batch, settleAs === "expired" ? "batch.expired" : "batch.decided");
  return batch;
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
