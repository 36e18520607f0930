import { and, eq, lte } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs } from "@/db/schema";
import { appendEvent, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { isoTime } from "@/lib/ids";

/**
 * A worker stopped renewing its lease (it crashed, or hung): the run goes back to `ready` so
 * another worker can claim it. The old token fails from then on with `claim_lost`.
 */
export async function expireLease(runId: string, now = Date.now()): Promise<boolean> {
  return transact(async (tx) => {
    const [before] = await tx
      .select({ workerId: runs.claimWorkerId })
      .from(runs)
      .where(eq(runs.id, runId));
    const [run] = await tx
      .update(runs)
      .set({
        status: "ready",
        claimTokenHash: null,
        claimWorkerId: null,
        leaseExpiresAt: null,
        updatedAt: now,
      })
      .where(and(eq(runs.id, runId), eq(runs.status, "resuming"), lte(runs.leaseExpiresAt, now)))
      .returning();
    if (!run) return false;
    await appendEvent(tx, {
      type: "run.lease_expired",
      runId: run.id,
      queueId: run.queueId,
      actor: SYSTEM_ACTOR,
      data: { workerId: before?.workerId ?? null, expiredAt: isoTime(now) },
      at: now,
    });
    return true;
  });
}

export async function expiredLeaseRunIds(now = Date.now(), limit = 100): Promise<string[]> {
  const rows = await getDb()
    .select({ id: runs.id })
    .from(runs)
    .where(and(eq(runs.status, "resuming"), lte(runs.leaseExpiresAt, now)))
    .limit(limit);
  return rows.map((r) => r.id);
}
