import type { InValue } from "@libsql/client";
import { fillPlaceholders } from "drizzle-orm";
import { getClient, getDb, type Database } from "./client";

// The reads on the hot paths (a pause, a decision) are built by drizzle once — with
// `sql.placeholder("name")` wherever a value changes per call — and then reused: their SQL text
// and result mapping are kept, so a request pays for no query building (which was a fifth of
// its CPU). `readTogether` sends several as one read batch: one round trip, one snapshot.

export type PreparedRead = {
  getQuery(): { sql: string; params: unknown[] };
  mapResult(response: unknown, isFromBatch?: boolean): unknown;
  all(placeholderValues?: Record<string, unknown>): Promise<unknown>;
};

/** Reads built once per database handle by `build`. */
export function preparedRead<P>(build: (db: Database) => P): () => P {
  const built = new WeakMap<Database, P>();
  return () => {
    const db = getDb();
    let read = built.get(db);
    if (!read) built.set(db, (read = build(db)));
    return read;
  };
}

export type RowsOf<P> = P extends { all(...args: never[]): Promise<infer Rows> } ? Rows : never;

/**
 * Runs prepared reads as one read batch (a single statement alone, with no read transaction
 * around it: one statement is one snapshot), their placeholders filled from `values`. A read
 * given as `null` is one the caller knows can find nothing (its key is absent), or need not
 * read: it is not sent, and answers no rows.
 */
export async function readTogether<const Reads extends readonly (PreparedRead | null)[]>(
  reads: Reads,
  values: Record<string, unknown>,
): Promise<{ -readonly [K in keyof Reads]: RowsOf<NonNullable<Reads[K]>> }> {
  const sent = reads.filter((read): read is PreparedRead => read !== null);
  const statements = sent.map((read) => {
    const query = read.getQuery();
    return { sql: query.sql, args: fillPlaceholders(query.params, values) as InValue[] };
  });
  const client = getClient();
  const results =
    statements.length === 0
      ? [] // nothing to read: no round trip at all
      : statements.length === 1
        ? [await client.execute(statements[0]!)]
        : await client.batch(statements, "deferred");
  let next = 0;
  return reads.map((read) => (read === null ? [] : read.mapResult(results[next++], true))) as {
    -readonly [K in keyof Reads]: RowsOf<NonNullable<Reads[K]>>;
  };
}
