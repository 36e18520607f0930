import { and, eq, lte } from "drizzle-orm";
import { getDb } from "@/db/client";
import { runs } from "@/db/schema";
import { changedRow, updateRow, untilWritten } from "@/db/write-batch";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime } from "@/lib/ids";

/**
 * A worker stopped renewing its lease (it crashed, or hung): the run goes back to `ready` so
 * another worker can claim it. The old token fails from then on with `claim_lost`.
 */
export async function expireLease(runId: string, now = Date.now()): Promise<boolean> {
  return untilWritten(async () => {
    const [run] = await getDb().select().from(runs).where(eq(runs.id, runId));
    if (!run || run.status !== "resuming" || (run.leaseExpiresAt ?? Infinity) > now) return false;
    await commit([
      updateRow(
        runs,
        {
          status: "ready",
          claimTokenHash: null,
          claimWorkerId: null,
          leaseExpiresAt: null,
          updatedAt: now,
        },
        // the claim as read: a heartbeat or a new claim meanwhile keeps the run where it is
        "id = ? and status = 'resuming' and updated_at = ? and lease_expires_at <= ?",
        run.id,
        run.updatedAt,
        now,
      ),
      changedRow(),
      eventRows({
        type: "run.lease_expired",
        runId: run.id,
        queueId: run.queueId,
        actor: SYSTEM_ACTOR,
        data: { workerId: run.claimWorkerId, expiredAt: isoTime(now) },
        at: now,
      }),
    ]);
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
