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
//
// Only `seq` and the previous hash come from the database: the content of every other column is
// known before the write, so it is built here (as `contentBytes`, with which `audit verify`
// checks, builds it) and sent as one more argument beside the column values. The statement then
// only adds the seq's part and hashes: its text was once 1.9 KB of casts and concatenations per
// row, which a libSQL server parses twice (its own parser, then SQLite's) on every write.

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

/** The last row's seq and hash (genesis when the log is empty): two seeks on the rowid. */
const HEAD_SQL = `select coalesce((select seq from events order by seq desc limit 1), 0) as seq,
  coalesce((select hash from events order by seq desc limit 1), '${GENESIS_HASH}') as hash`;

/** SQL: the hash of the row at `seq` after `previousHash`, the rest of its content being `rest`. */
const linkSql = (previousHash: string, seq: string, rest: string) =>
  `lower(hex(sha3(${previousHash} || length(cast(${seq} as blob)) || ':' || ${seq} || ${rest})))`;

const insertSql = new Map<number, string>();

/** A row's values as its columns store them: `at` an integer, the others text or NULL. */
function storedValues(row: readonly InValue[]): (string | number | null)[] {
  return row.map((value, i) =>
    value === null || value === undefined
      ? null
      : VALUE_COLUMNS[i] === "at"
        ? Math.trunc(Number(value))
        : String(value),
  );
}

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
  return {
    sql: text,
    args: rows.flatMap((row) => {
      const values = storedValues(row);
      return [...values, contentText(values)];
    }),
  };
}

/**
 * `contentBytes` of these values as text: sent as text beside the values themselves, it reaches
 * the database as the same UTF-8 the values are stored as (and is cheaper to build than bytes).
 */
function contentText(values: readonly (string | number | null)[]): string {
  let text = "";
  for (const value of values) {
    if (value === null) text += "-";
    else {
      const string = String(value);
      text += `${Buffer.byteLength(string, "utf8")}:${string}`;
    }
  }
  return text;
}

const columnList = `seq, ${VALUE_COLUMNS.join(", ")}, hash`;
const tuple = `(${[...VALUE_COLUMNS, "rest"].map(() => "?").join(", ")})`;

function oneRowSql(): string {
  // `at` is cast: a number with a fraction would be stored as a float, while its content
  // (storedValues) is the integer.
  const values = VALUE_COLUMNS.map((c) => (c === "at" ? "cast(? as integer)" : "?")).join(", ");
  return `insert into events (${columnList})
select h.seq + 1, ${values}, ${linkSql("h.hash", "(h.seq + 1)", "?")} from (${HEAD_SQL}) h
returning seq, hash`;
}

function severalRowsSql(count: number): string {
  const values = Array.from({ length: count }, (_, i) => `(${i + 1}, ${tuple.slice(1)}`);
  const stored = VALUE_COLUMNS.map((c) => (c === "at" ? "cast(v.at as integer)" : `v.${c}`));
  return `with recursive
  v(i, ${VALUE_COLUMNS.join(", ")}, rest) as (values ${values.join(", ")}),
  h(seq, hash) as materialized (${HEAD_SQL}),
  chain(i, seq, hash) as (
    select 0, seq, hash from h
    union all
    select v.i, c.seq + 1, ${linkSql("c.hash", "(c.seq + 1)", "v.rest")} from chain c join v on v.i = c.i + 1
  )
insert into events (${columnList})
select chain.seq, ${stored.join(", ")}, chain.hash
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
