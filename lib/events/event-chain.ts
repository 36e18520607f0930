import { createHash } from "node:crypto";
import type { InValue } from "@libsql/client";
import type { Statement } from "@/db/write-batch";

// The event log is a hash chain, so that a changed, removed or slipped-in row shows
// (`npm run admin -- audit verify`, lib/audit/verify-chain.ts). Every row stores
//
//   hash = lower(hex(SHA3-256( previous row's hash || content of this row )))
//
// where the first row's "previous hash" is GENESIS_HASH and the content is each column of the row,
// in CHAINED_COLUMNS order, written as `<length in bytes>:<value>` (`-` for NULL), so no two rows
// can share a content by shifting bytes between columns. `seq` is part of the content: a row
// moved to another place of the log no longer matches.
//
// One chain for the whole log, not one per queue: `seq` is already one global order (commit
// order), so "the row before" is simply the last row, found on the rowid; a per-queue chain would
// leave the queue-less events (keys, tokens, people, SSO: most of what the audit view shows)
// outside any chain, and give an operator one head per queue to keep elsewhere instead of one.
//
// The hash is computed by SQLite's sha3() *inside* the INSERT, from the last row as that write
// transaction sees it: SQLite (embedded or a libSQL server) commits one write at a time, so two
// writers can never chain onto the same row, and it costs no read before the write and no
// extra round trip. The statement also gives each row its `seq` (the last one + 1), so the
// position each hash covers is the position the row gets.

/** The "previous hash" of the first row of the log. */
export const GENESIS_HASH = "0".repeat(64);

/** The columns of `events` that the chain covers, in the order their content is hashed. */
export const CHAINED_COLUMNS = [
  "seq",
  "type",
  "at",
  "run_id",
  "batch_id",
  "call_id",
  "queue_id",
  "actor_kind",
  "actor_id",
  "actor_name",
  "data",
] as const;

/** The written columns, in the order `chainedInsert` takes each row's values (all but seq). */
const VALUE_COLUMNS = CHAINED_COLUMNS.slice(1);

/** SQL: the content of a row whose columns are `column(name)` (see the top of this file). */
export function contentSql(column: (name: (typeof CHAINED_COLUMNS)[number]) => string): string {
  return CHAINED_COLUMNS.map((name) => {
    const value = column(name);
    return `coalesce(length(cast(${value} as blob)) || ':' || ${value}, '-')`;
  }).join(" || ");
}

/** SQL: the hash of a row that follows `previousHash`, with its content as `contentSql` builds it. */
export const linkSql = (previousHash: string, content: string) =>
  `lower(hex(sha3(${previousHash} || ${content})))`;

/** The last row's seq and hash (genesis when the log is empty): two seeks on the rowid. */
const HEAD_SQL = `select coalesce((select seq from events order by seq desc limit 1), 0) as seq,
  coalesce((select hash from events order by seq desc limit 1), '${GENESIS_HASH}') as hash`;

const insertSql = new Map<number, string>();

/**
 * The INSERT of `rows` (each: the values of VALUE_COLUMNS) as the next rows of the chain, in
 * order, answering `seq, hash` of each. One row (the usual case) follows the head directly; several
 * follow each other through a recursive CTE, so the second row chains to the first of the same
 * statement whatever order SQLite evaluates the statement's rows in.
 */
export function chainedInsert(rows: InValue[][]): Statement {
  let text = insertSql.get(rows.length);
  if (!text) {
    text = rows.length === 1 ? oneRowSql() : severalRowsSql(rows.length);
    insertSql.set(rows.length, text);
  }
  return { sql: text, args: rows.flat() };
}

const columnList = `seq, ${VALUE_COLUMNS.join(", ")}, hash`;

/**
 * A value as its column stores it. A VALUES row has no column types, so a number bound for `at`
 * may arrive as a float (its text "….0"), and would be hashed as that while stored as an integer:
 * the same cast goes into the row and into its hash.
 */
const stored = (name: (typeof VALUE_COLUMNS)[number], row: string) =>
  name === "at" ? `cast(${row}.at as integer)` : `cast(${row}.${name} as text)`;
const tuple = `(${VALUE_COLUMNS.map(() => "?").join(", ")})`;

function oneRowSql(): string {
  const content = contentSql((name) => (name === "seq" ? "(h.seq + 1)" : stored(name, "v")));
  return `with v(${VALUE_COLUMNS.join(", ")}) as (values ${tuple}), h(seq, hash) as (${HEAD_SQL})
insert into events (${columnList})
select h.seq + 1, ${VALUE_COLUMNS.map((c) => stored(c, "v")).join(", ")}, ${linkSql("h.hash", content)} from v, h
returning seq, hash`;
}

function severalRowsSql(count: number): string {
  const values = Array.from({ length: count }, (_, i) => `(${i + 1}, ${tuple.slice(1)}`);
  const content = contentSql((name) => (name === "seq" ? "(c.seq + 1)" : stored(name, "v")));
  return `with recursive
  v(i, ${VALUE_COLUMNS.join(", ")}) as (values ${values.join(", ")}),
  h(seq, hash) as materialized (${HEAD_SQL}),
  chain(i, seq, hash) as (
    select 0, seq, hash from h
    union all
    select v.i, c.seq + 1, ${linkSql("c.hash", content)} from chain c join v on v.i = c.i + 1
  )
insert into events (${columnList})
select chain.seq, ${VALUE_COLUMNS.map((c) => stored(c, "v")).join(", ")}, chain.hash
from chain join v on v.i = chain.i order by chain.i
returning seq, hash`;
}

/* ------------------------------------------------------- the same hash, computed in JavaScript */

/** A column's value as read back: text as its UTF-8 bytes (or a string), integers, or NULL. */
export type ChainedValue = string | number | bigint | Uint8Array | null;

/** The content of a row (CHAINED_COLUMNS order) as the bytes the chain hashes. */
export function contentBytes(values: readonly ChainedValue[]): Buffer {
  const parts: Buffer[] = [];
  for (const value of values) {
    if (value === null) {
      parts.push(DASH);
      continue;
    }
    const bytes =
      value instanceof Uint8Array ? Buffer.from(value) : Buffer.from(String(value), "utf8");
    parts.push(Buffer.from(`${bytes.length}:`, "ascii"), bytes);
  }
  return Buffer.concat(parts);
}
const DASH = Buffer.from("-", "ascii");

/** The hash of a row with this content that follows `previousHash`: what the row must store. */
export function linkHash(previousHash: string, content: Buffer): string {
  return createHash("sha3-256").update(previousHash, "ascii").update(content).digest("hex");
}
