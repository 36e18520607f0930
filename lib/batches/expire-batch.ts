import { and, eq, lte } from "drizzle-orm";
import { getDb } from "@/db/client";
import { batches, calls } from "@/db/schema";
import { appendEvent, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { escalateBatch } from "./escalate-batch";
import { settleBatchIfDone } from "./settle-batch";

/**
 * Settles a batch whose deadline has passed, by its `onTimeout`: open calls are rejected
 * (`expired`, the default: fail closed) or approved, with decision source `timeout`; or the batch
 * moves to its queue's escalation queue (rejected when there is none).
 * Returns false if the batch was no longer pending (decided meanwhile, by a reviewer or another sweeper).
 */
export async function expireBatch(batchId: string, now = Date.now()): Promise<boolean> {
  return transact(async (tx) => {
    const [batch] = await tx
      .select()
      .from(batches)
      .where(
        and(eq(batches.id, batchId), eq(batches.status, "pending"), lte(batches.expiresAt, now)),
      );
    if (!batch) return false;
    let escalationRefused: string | null = null;
    if (batch.onTimeout === "escalate") {
      const escalation = await escalateBatch(tx, batch, now);
      if (escalation.escalated) return true;
      escalationRefused = escalation.reason;
    }
    const approve = batch.onTimeout === "approve";
    const timedOut = await tx
      .update(calls)
      .set({
        status: approve ? "approved" : "expired",
        decisionOutcome: approve ? "approved" : "rejected",
        decisionSource: "timeout",
        decidedAt: now,
        decisionReason: approve
          ? "Approved automatically at the deadline (onTimeout: approve)."
          : (escalationRefused ?? "No decision before the deadline; rejected (onTimeout: reject)."),
      })
      .where(and(eq(calls.batchId, batch.id), eq(calls.status, "pending")))
      .returning({ id: calls.id });
    for (const call of timedOut) {
      await appendEvent(tx, {
        type: "call.decided",
        runId: batch.runId,
        batchId: batch.id,
        callId: call.id,
        queueId: batch.queueId,
        actor: SYSTEM_ACTOR,
        data: { outcome: approve ? "approved" : "rejected", source: "timeout" },
        at: now,
      });
    }
    return (await settleBatchIfDone(tx, batch.id, SYSTEM_ACTOR, "expired")) !== null;
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
