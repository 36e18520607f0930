import { getClient, runWrite } from "@/db/client";
import type { ClusterLease } from "@/db/schema";

// Takes or renews a cluster lease in one conditional statement (lib/README.md, invariant 2):
// the row is written only when it is free (no row), already ours, or expired. Expiry is read
// from the database's clock, so instances whose clocks disagree never both hold it.

/** The database's clock in milliseconds (sqld's, or the embedded file's host's). */
const DB_NOW = "cast((julianday('now') - 2440587.5) * 86400000 as integer)";

/**
 * Holds the lease `name` for `holder` for `ttlMs` from now, if it is free, ours or expired (or
 * still held by `replacing`, a holder known to be dead). Returns whether `holder` holds it now;
 * false means another live instance does.
 */
export async function holdLease(
  name: ClusterLease["name"],
  holder: string,
  ttlMs: number,
  replacing: string | null = null,
): Promise<boolean> {
  const result = await runWrite((client) =>
    client.execute({
      sql: `insert into cluster_leases (name, holder, expires_at) values (?, ?, ${DB_NOW} + ?)
            on conflict (name) do update set holder = excluded.holder, expires_at = excluded.expires_at
            where cluster_leases.holder in (excluded.holder, ?) or cluster_leases.expires_at <= ${DB_NOW}
            returning holder`,
      args: [name, holder, ttlMs, replacing],
    }),
  );
  return result.rows.length === 1;
}

/** Who holds the lease `name` (expired or not), or null when nobody ever took it. */
export async function leaseHolder(name: ClusterLease["name"]): Promise<string | null> {
  const { rows } = await getClient().execute({
    sql: "select holder from cluster_leases where name = ?",
    args: [name],
  });
  return rows.length ? String(rows[0]![0]) : null;
}

/** Gives the lease up (a clean stop), so another instance takes it at its next attempt. */
export async function releaseLease(name: ClusterLease["name"], holder: string): Promise<void> {
  await runWrite((client) =>
    client.execute({
      sql: "update cluster_leases set expires_at = 0 where name = ? and holder = ?",
      args: [name, holder],
    }),
  );
}
