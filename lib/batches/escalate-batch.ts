import { eq } from "drizzle-orm";
import type { Database } from "@/db/client";
import { batches, calls, queues } from "@/db/schema";
import { changedRow, guard, updateRow, type Statement } from "@/db/write-batch";
import { assembleBatchViews, type BatchViewRows } from "@/lib/read-models/batch-run-views";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";

/** A chain of escalations ends here: the batch is then rejected (fail closed). */
export const MAX_ESCALATIONS = 3;

export type EscalationRefusal = { escalated: false; reason: string };

/**
 * Plans moving an overdue batch (its rows as read: `rows`) to its queue's escalation queue, with
 * a new deadline (that queue's default timeout) and that queue's quorum for its open calls. One
 * event in each queue: the old queue's reviewers see the card leave, the new queue's see it
 * arrive. Returns why not, when there is nowhere to go; the caller then rejects the batch.
 */
export async function planEscalation(
  db: Database,
  rows: BatchViewRows,
  now: number,
): Promise<{ escalated: true; writes: Statement[] } | EscalationRefusal> {
  const row = rows.batchRows[0]!;
  const batch = row.batch;
  if (batch.escalations >= MAX_ESCALATIONS) {
    return {
      escalated: false,
      reason: `No decision before the deadline after ${MAX_ESCALATIONS} escalations; rejected (onTimeout: escalate).`,
    };
  }
  const [from] = await db.select().from(queues).where(eq(queues.id, batch.queueId));
  const [to] = from?.escalationQueueId
    ? await db.select().from(queues).where(eq(queues.id, from.escalationQueueId))
    : [];
  if (!from || !to || to.archivedAt !== null || to.id === from.id) {
    return {
      escalated: false,
      reason:
        "No decision before the deadline and no escalation queue to send it to; rejected (onTimeout: escalate).",
    };
  }
  const moved = {
    queueId: to.id,
    expiresAt: now + to.defaultTimeoutSecs * 1000,
    escalations: batch.escalations + 1,
  };
  rows.batchRows[0] = {
    ...row,
    batch: { ...batch, ...moved },
    queueName: to.name,
    claimMode: to.claimMode,
  };
  const open = rows.callRows.filter((r) => r.call.status === "pending");
  for (const r of open) r.call = { ...r.call, requiredApprovals: to.requiredApprovals };
  const view = assembleBatchViews(rows, [batch.id])[0]!;
  const data = {
    from: { id: from.id, name: from.name },
    to: { id: to.id, name: to.name },
    escalations: moved.escalations,
    batch: view,
  };
  const base = { type: "batch.escalated", runId: batch.runId, batchId: batch.id };
  return {
    escalated: true,
    writes: [
      updateRow(
        batches,
        moved,
        "id = ? and status = 'pending' and queue_id = ? and escalations = ?",
        batch.id,
        from.id,
        batch.escalations,
      ),
      changedRow(),
      // the view's open calls are the ones still open
      guard(
        "(select count(*) from calls where batch_id = ? and status = 'pending') = ?",
        batch.id,
        open.length,
      ),
      updateRow(
        calls,
        { requiredApprovals: to.requiredApprovals },
        "batch_id = ? and status = 'pending'",
        batch.id,
      ),
      eventRows(
        { ...base, queueId: from.id, actor: SYSTEM_ACTOR, data, at: now },
        { ...base, queueId: to.id, actor: SYSTEM_ACTOR, data, at: now },
      ),
    ],
  };
}
