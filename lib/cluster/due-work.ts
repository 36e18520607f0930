import { getClient } from "@/db/client";

// What the cluster's periodic work would find, asked in ONE read (one request to a libSQL
// server) instead of one per worker: an idle cluster costs the database a request per tick, and
// the workers' own queries run only when it says they have something to do. Each test is an
// EXISTS on the partial index its worker reads (batches_pending_deadline_idx, runs_lease_idx,
// webhook_due_idx).

export type DueWork = {
  /** pending batches past their deadline, or resuming runs whose claim ran out */
  sweep: boolean;
  /** webhook deliveries due (lib/webhooks/deliver-webhooks.ts) */
  webhooks: boolean;
};

export async function dueWork(now = Date.now()): Promise<DueWork> {
  const { rows } = await getClient().execute({
    sql: `select
            exists (select 1 from batches where status = 'pending' and expires_at <= ?)
              or exists (select 1 from runs where status = 'resuming' and lease_expires_at <= ?),
            exists (select 1 from webhook_deliveries where status = 'pending' and next_attempt_at <= ?)`,
    args: [now, now, now],
  });
  const row = rows[0];
  return { sweep: Number(row?.[0]) === 1, webhooks: Number(row?.[1]) === 1 };
}
