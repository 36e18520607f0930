import { getClient } from "@/db/client";
import { GENESIS_HASH } from "@/lib/events/event-chain";
import { log } from "@/lib/log/logger";

// The chain's head — the last row's seq and hash — written somewhere the database's holder cannot
// rewrite: the server logs it every AUDIT_HEAD_LOG_MS (when it moved), so the log (shipped off the
// machine as logs usually are) holds a trail of heads. Someone who rebuilds the chain after an
// edit cannot make it end on a head the log already recorded; `audit verify` prints the head to
// compare with the log's lines.

export type ChainHead = { seq: number; hash: string };

export async function readChainHead(): Promise<ChainHead> {
  const result = await getClient().execute(
    "select seq, hash from events order by seq desc limit 1",
  );
  const row = result.rows[0];
  return row ? { seq: Number(row[0]), hash: String(row[1] ?? "") } : { seq: 0, hash: GENESIS_HASH };
}

let lastLogged: number | undefined;

/** Logs the head when it moved since this process last logged it (the anchor's one step). */
export async function logChainHead(): Promise<void> {
  const head = await readChainHead();
  if (head.seq === lastLogged) return;
  lastLogged = head.seq;
  log().info({ chainHead: head }, "Event log chain head");
}
