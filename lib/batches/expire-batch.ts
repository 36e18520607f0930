import { and, eq, lte } from "drizzle-orm";
import { getDb } from "@/db/client";
import { batches, calls } from "@/db/schema";
import { guard, untilWritten, updateRow } from "@/db/write-batch";
import { readBatchViewRows } from "@/lib/read-models/batch-run-views";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { planEscalation } from "./escalate-batch";
import { planSettlement } from "./settle-batch";

/**
 * Settles a batch whose deadline has passed, by its `onTimeout`: open calls are rejected
 * (`expired`, the default: fail closed) or approved, with decision source `timeout`; or the batch
 * moves to its queue's escalation queue (rejected when there is none).
 * Returns false if the batch was no longer pending (decided meanwhile, by a reviewer or another sweeper).
 */
export async function expireBatch(batchId: string, now = Date.now()): Promise<boolean> {
  return untilWritten(async () => {
    const db = getDb();
    const rows = await readBatchViewRows(db, [batchId]);
    const batch = rows.batchRows[0]?.batch;
    if (!batch || batch.status !== "pending" || batch.expiresAt > now) return false;
    let escalationRefused: string | null = null;
    if (batch.onTimeout === "escalate") {
      const escalation = await planEscalation(db, rows, now);
      if (escalation.escalated) {
        await commit(escalation.writes);
        return true;
      }
      escalationRefused = escalation.reason;
    }
    const approve = batch.onTimeout === "approve";
    const timedOut = {
      status: approve ? ("approved" as const) : ("expired" as const),
      decisionOutcome: approve ? ("approved" as const) : ("rejected" as const),
      decisionSource: "timeout" as const,
      decidedAt: now,
      decisionReason: approve
        ? "Approved automatically at the deadline (onTimeout: approve)."
        : (escalationRefused ?? "No decision before the deadline; rejected (onTimeout: reject)."),
    };
    const open = rows.callRows.filter((r) => r.call.status === "pending");
    for (const r of open) r.call = { ...r.call, ...timedOut };
    await commit([
      // still overdue, with the open calls this plan read (a reviewer's decision meanwhile aborts it)
      guard(
        "exists (select 1 from batches where id = ? and status = 'pending' and expires_at <= ?) and (select count(*) from calls where batch_id = ? and status = 'pending') = ?",
        batch.id,
        now,
        batch.id,
        open.length,
      ),
      updateRow(calls, timedOut, "batch_id = ? and status = 'pending'", batch.id),
      ...(open.length > 0
        ? [
            eventRows(
              ...open.map(({ call }) => ({
                type: "call.decided",
                runId: batch.runId,
                batchId: batch.id,
                callId: call.id,
                queueId: batch.queueId,
                actor: SYSTEM_ACTOR,
                data: { outcome: timedOut.decisionOutcome, source: "timeout" },
                at: now,
              })),
            ),
          ]
        : []),
      ...planSettlement(rows, SYSTEM_ACTOR, now, "expired"),
    ]);
    return true;
  });
}

/** Ids of pending batches past their deadline (the partial index makes this cheap). */
export async function overdueBatchIds(now = Date.now(), limit = 100): Promise<string[]> {
  const rows = await getDb()
    .select({ id: batches.id })
    .from(batches)
    .where(and(eq(batches.status, "pending"), lte(batches.expiresAt, now)))
    .orderBy(batches.expiresAt)
    .limit(limit);
  return rows.map((r) => r.id);
}
