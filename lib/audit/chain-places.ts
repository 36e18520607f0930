import { getClient } from "@/db/client";

/** An event's place in the hash chain (lib/events/event-chain.ts). */
export type ChainPlace = { seq: number; hash: string | null };

/**
 * For a page of exported batches: the latest event of each batch and of each of its calls, keyed
 * by batch id and call id — the event that recorded the row's current state, for an auditor to
 * find it in the chain (an audit export, or `audit verify`). Found through the run index.
 */
export async function latestEvents(
  batches: { id: string; runId: string }[],
): Promise<Map<string, ChainPlace>> {
  const places = new Map<string, ChainPlace>();
  if (batches.length === 0) return places;
  const runIds = [...new Set(batches.map((b) => b.runId))];
  const batchIds = batches.map((b) => b.id);
  // SQLite gives the bare `hash` of the row whose seq is the max of its group.
  const result = await getClient().execute({
    sql: `select batch_id, call_id, max(seq), hash from events
      where run_id in (${runIds.map(() => "?").join(", ")})
        and batch_id in (${batchIds.map(() => "?").join(", ")})
      group by batch_id, call_id`,
    args: [...runIds, ...batchIds],
  });
  for (const row of result.rows) {
    const hash = row[3];
    places.set(String(row[1] ?? row[0]), {
      seq: Number(row[2]),
      hash: hash === null || hash === undefined ? null : String(hash),
    });
  }
  return places;
}
