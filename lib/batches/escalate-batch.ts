import { and, eq } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { batches, calls, queues, type Batch } from "@/db/schema";
import { loadBatchView } from "@/lib/api/views";
import { appendEvents, SYSTEM_ACTOR } from "@/lib/events/append-event";

/** A chain of escalations ends here: the batch is then rejected (fail closed). */
export const MAX_ESCALATIONS = 3;

export type EscalationRefusal = { escalated: false; reason: string };

/**
 * Moves an overdue batch to its queue's escalation queue, with a new deadline (that queue's
 * default timeout) and that queue's quorum for its open calls. One event in each queue: the old
 * queue's reviewers see the card leave, the new queue's see it arrive. Returns why not, when
 * there is nowhere to go; the caller then rejects the batch.
 */
export async function escalateBatch(
  tx: Transaction,
  batch: Batch,
  now: number,
): Promise<{ escalated: true } | EscalationRefusal> {
  if (batch.escalations >= MAX_ESCALATIONS) {
    return {
      escalated: false,
      reason: `No decision before the deadline after ${MAX_ESCALATIONS} escalations; rejected (onTimeout: escalate).`,
    };
  }
  const [from] = await tx.select().from(queues).where(eq(queues.id, batch.queueId));
  const [to] = from?.escalationQueueId
    ? await tx.select().from(queues).where(eq(queues.id, from.escalationQueueId))
    : [];
  if (!from || !to || to.archivedAt !== null || to.id === from.id) {
    return {
      escalated: false,
      reason:
        "No decision before the deadline and no escalation queue to send it to; rejected (onTimeout: escalate).",
    };
  }
  const [moved] = await tx
    .update(batches)
    .set({
      queueId: to.id,
      expiresAt: now + to.defaultTimeoutSecs * 1000,
      escalations: batch.escalations + 1,
    })
    .where(
      and(
        eq(batches.id, batch.id),
        eq(batches.status, "pending"),
        eq(batches.queueId, from.id),
        eq(batches.escalations, batch.escalations),
      ),
    )
    .returning({ id: batches.id });
  if (!moved) return { escalated: false, reason: "moved meanwhile" };
  await tx
    .update(calls)
    .set({ requiredApprovals: to.requiredApprovals })
    .where(and(eq(calls.batchId, batch.id), eq(calls.status, "pending")));

  const view = (await loadBatchView(tx, batch.id))!;
  const data = {
    from: { id: from.id, name: from.name },
    to: { id: to.id, name: to.name },
    escalations: batch.escalations + 1,
    batch: view,
  };
  const base = { type: "batch.escalated", runId: batch.runId, batchId: batch.id };
  await appendEvents(tx, [
    { ...base, queueId: from.id, actor: SYSTEM_ACTOR, data, at: now },
    { ...base, queueId: to.id, actor: SYSTEM_ACTOR, data, at: now },
  ]);
  return { escalated: true };
}
