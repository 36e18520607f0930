import { statement, writeBatch } from "@/db/write-batch";

// Counters for the rate limits, kept in the database (table rate_limit_counts) so that every
// instance over it counts together and a restart forgets nothing: a guesser spread over several
// instances behind a load balancer meets one limit. A counter is a fixed window: the first
// attempt opens it for `windowSecs`, later ones add to it until it ends, and the next attempt after
// that opens a new one. Counting is one upsert (no read before it, no compare-and-swap: two
// attempts at once simply both count), sent with the purge of windows long over, so the table
// holds only live windows.

export type Count = { count: number; windowEndsAt: number };

/** Windows ended this long ago are deleted (longer than any window, so none is cut short). */
const PURGE_AFTER_MS = 60 * 60 * 1000;

/** Counts one attempt under `key`; answers the window's count with this attempt included. */
export async function countAttempt(
  key: string,
  windowSecs: number,
  now = Date.now(),
): Promise<Count> {
  const [, counted] = await writeBatch([
    statement("delete from rate_limit_counts where window_ends_at < ?", now - PURGE_AFTER_MS),
    // In an upsert's SET, bare column names are the stored row's values (before this update).
    statement(
      `insert into rate_limit_counts (key, count, window_ends_at) values (?, 1, ?)
       on conflict (key) do update set
         count = case when window_ends_at <= ? then 1 else count + 1 end,
         window_ends_at = case when window_ends_at <= ? then excluded.window_ends_at else window_ends_at end
       returning count, window_ends_at`,
      key,
      now + windowSecs * 1000,
      now,
      now,
    ),
  ]);
  const row = counted!.rows[0]!;
  return { count: Number(row.count), windowEndsAt: Number(row.window_ends_at) };
}
