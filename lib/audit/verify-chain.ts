import type { Client } from "@libsql/client";
import {
  CHAINED_COLUMNS,
  contentBytes,
  GENESIS_HASH,
  linkHash,
  type ChainedValue,
} from "@/lib/events/event-chain";

// `npm run admin -- audit verify`: walks the event log's hash chain (lib/events/event-chain.ts)
// from the first row to the last, recomputing every hash in this process (node's SHA3-256, not
// the database's), and names the first row that does not match. Read-only: it reads pages of rows
// by seq, so it runs beside a live server, embedded file or libSQL server alike.

export type ChainRow = {
  seq: number;
  hash: string | null;
  /** the chained columns as read (CHAINED_COLUMNS order), and as the bytes the chain hashes */
  values: ChainedValue[];
  content: Buffer;
};

export type ChainVerdict =
  | { ok: true; count: number; head: { seq: number; hash: string } }
  | { ok: false; count: number; seq: number; problem: string };

const PAGE = 1000;

/** Text columns are read as their bytes, so the hash covers exactly what is stored. */
const selectList = CHAINED_COLUMNS.map((c) =>
  c === "seq" || c === "at" ? c : `cast(${c} as blob)`,
).join(", ");

/** The rows of the log in seq order, a page at a time. */
export async function* chainRows(client: Client): AsyncGenerator<ChainRow> {
  let after = 0;
  for (;;) {
    const page = await client.execute({
      sql: `select ${selectList}, hash from events where seq > ? order by seq limit ${PAGE}`,
      args: [after],
    });
    for (const row of page.rows) {
      const values = CHAINED_COLUMNS.map((_, i) => blobOrValue(row[i]));
      const hash = row[CHAINED_COLUMNS.length];
      yield {
        seq: Number(row[0]),
        hash: hash === null || hash === undefined ? null : String(hash),
        values,
        content: contentBytes(values),
      };
    }
    if (page.rows.length < PAGE) return;
    after = Number(page.rows[page.rows.length - 1]![0]);
  }
}

function blobOrValue(value: unknown): ChainedValue {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return value as ChainedValue;
}

/** A head recorded elsewhere (the server's log, an export): that row must still carry that hash. */
export type Anchor = { seq: number; hash: string };

/** Walks the chain; stops at the first row that does not match, saying what it looks like. */
export async function verifyChain(
  rows: AsyncIterable<ChainRow>,
  anchors: Anchor[] = [],
): Promise<ChainVerdict> {
  let previous: { seq: number; hash: string } = { seq: 0, hash: GENESIS_HASH };
  let count = 0;
  let suspect: { row: ChainRow; before: { seq: number; hash: string } } | null = null;
  const anchorsFound = new Set<number>();
  for await (const row of rows) {
    if (suspect) return { ok: false, count, ...explain(suspect.row, suspect.before, row) };
    // Only the links count: a gap in seq is a deleted row only if the link across it breaks (a
    // database upgraded to the chain keeps the gaps it had, chained over by its migration).
    if (row.hash !== linkHash(previous.hash, row.content)) {
      // The row after tells an edited row (it still chains to the stored hash) from an inserted one.
      suspect = { row, before: previous };
      continue;
    }
    const anchor = anchors.find((a) => a.seq === row.seq);
    if (anchor && anchor.hash !== row.hash)
      return {
        ok: false,
        count,
        seq: row.seq,
        problem: `does not carry the hash recorded for it (${anchor.hash}): the chain was rebuilt from here or before`,
      };
    if (anchor) anchorsFound.add(anchor.seq);
    count++;
    previous = { seq: row.seq, hash: row.hash };
  }
  if (suspect) return { ok: false, count, ...explain(suspect.row, suspect.before, null) };
  // A recorded row that is gone while later rows remain: deleted, and the chain rebuilt over it
  // (the chain alone allows gaps, which an upgraded database may have).
  const gone = anchors.find((a) => a.seq <= previous.seq && !anchorsFound.has(a.seq));
  if (gone)
    return {
      ok: false,
      count,
      seq: gone.seq,
      problem: `was recorded (hash ${gone.hash}) but is no longer in the log: it was deleted and the chain rebuilt over it`,
    };
  const beyond = anchors.find((a) => a.seq > previous.seq);
  if (beyond)
    return {
      ok: false,
      count,
      seq: beyond.seq,
      problem: `was recorded (hash ${beyond.hash}) but the log now ends at seq ${previous.seq}: its newest rows were deleted`,
    };
  return { ok: true, count, head: previous };
}

function explain(
  row: ChainRow,
  before: { seq: number; hash: string },
  next: ChainRow | null,
): { seq: number; problem: string } {
  const seq = row.seq;
  if (row.hash === null)
    return { seq, problem: `has no chain hash: it was inserted without the chain` };
  if (row.seq > before.seq + 1) {
    const missing =
      row.seq === before.seq + 2
        ? `seq ${before.seq + 1} is`
        : `seq ${before.seq + 1}–${seq - 1} are`;
    return { seq, problem: `does not follow seq ${before.seq}: ${missing} missing (deleted)` };
  }
  if (next && next.hash === linkHash(row.hash, next.content))
    return { seq, problem: "was edited: its content no longer matches its hash" };
  // An inserted row: the row after it chains to the row before it, at its old place if the rows
  // after were moved up one to make room.
  const renumbered = next && contentBytes([next.seq - 1, ...next.values.slice(1)]);
  if (
    next &&
    (next.hash === linkHash(before.hash, next.content) ||
      next.hash === linkHash(before.hash, renumbered!))
  )
    return { seq, problem: "was inserted: the row after it chains to the row before it" };
  return {
    seq,
    problem: next
      ? "does not match its hash (edited, or rows around it were inserted or deleted)"
      : "does not match its hash (the last row: edited or appended by hand)",
  };
}

/** One line for a person: the verdict of `audit verify`. */
export function describeVerdict(verdict: ChainVerdict): string {
  return verdict.ok
    ? `Verified ${verdict.count} events: the chain is intact up to seq ${verdict.head.seq}, head hash ${verdict.head.hash}.`
    : `The event log does not verify: event seq ${verdict.seq} ${verdict.problem} (${verdict.count} events before it verified).`;
}
