import type { InValue, ResultSet } from "@libsql/client";
import { getTableColumns, getTableName, type Table } from "drizzle-orm";
import { runWriteBatch } from "./client";
import { forgetStatements } from "./statement-cache";
import { writeMetrics as metrics } from "./write-metrics";

// How a state change is written (lib/README.md, invariant 2): one libSQL batch — one round trip, one
// transaction — whose statements carry their compare-and-swap conditions in SQL.
//
// A verb reads what it needs first, outside the write lock, decides in JavaScript, and then
// sends all its writes at once, each with the conditions it relies on (status, revision,
// deadline, quorum, claim) in its WHERE clause. After a conditional write comes a *guard*: a
// statement that aborts the whole batch when that write found the state moved (`changedRow`), or
// when a fact the decision relied on no longer holds (`guard`). An aborted batch wrote nothing,
// events included. `untilWritten` then runs the verb again from its reads, and this time its
// checks see the new state and give the loser the answer it deserves (a 409 naming the winner),
// or build the write the new state calls for.
//
// The guard is an INSERT into `write_guards`, whose trigger raises ABORT (migration 0007): SQLite
// has no other way for one statement of a batch to cancel the batch.

export type Statement = { sql: string; args: InValue[] };

export function statement(sql: string, ...args: InValue[]): Statement {
  return { sql, args };
}

/** Aborts the batch unless the statement just before it changed at least one row. */
export function changedRow(): Statement {
  return { sql: "insert into write_guards (reason) select 1 where changes() = 0", args: [] };
}

/**
 * SQL that holds only when the statement just before changed a row (SQLite's `changes()` is the
 * count of the last *finished* statement). A conditional write or a `guard` that requires it stands
 * in for the `changedRow()` of the write just before it: its own guard then covers both, one
 * statement fewer.
 */
export const PREVIOUS_CHANGED = "changes() > 0";

/** Aborts the batch unless `condition` (SQL, with its own `?` arguments) holds at this point. */
export function guard(condition: string, ...args: InValue[]): Statement {
  return { sql: `insert into write_guards (reason) select 1 where not (${condition})`, args };
}

/** A guard aborted the batch: the state moved after the verb read it. Nothing was written. */
export class StateMoved extends Error {
  constructor() {
    super("The state changed while this write was being prepared; nothing was written.");
  }
}

/**
 * Runs the statements as one atomic write batch: one round trip, all or nothing. On the embedded
 * file, batches asked for at the same time share one transaction and one fsync, each in a
 * savepoint of its own (group commit: db/group-commit.ts), with the same outcome and the same
 * errors for each as if it had been committed alone.
 */
export async function writeBatch(statements: Statement[]): Promise<ResultSet[]> {
  // the write-latency histogram of /metrics (lib/metrics/metrics.ts), lock wait included
  const endTimer = metrics().writeDuration.startTimer();
  try {
    const results = await runWriteBatch(statements);
    endTimer({ result: "committed" });
    return results;
  } catch (error) {
    // see db/statement-cache.ts: a failed statement must not stay on its connection
    forgetStatements();
    if (isGuard(error)) {
      endTimer({ result: "moved" });
      throw new StateMoved();
    }
    endTimer({ result: "failed" });
    throw error;
  }
}

function isGuard(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e.message.includes("countersign_write_guard")) return true;
  }
  return false;
}

/**
 * Runs `attempt` (read → decide → one write batch) until its batch is not aborted by a guard.
 * Each new attempt reads the state as the winner left it, so it either builds the write that
 * state calls for or throws the conflict it deserves; a handful of attempts is plenty even under
 * heavy contention, since every retry is caused by someone else's committed write.
 */
export async function untilWritten<T>(attempt: (tries: number) => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt(tries);
    } catch (error) {
      if (!(error instanceof StateMoved) || tries >= MAX_ATTEMPTS) throw error;
    }
  }
}

const MAX_ATTEMPTS = 8;

/* ------------------------------------------------------------ statements from drizzle tables */

type Encoder = { names: string; placeholders: string; values: (row: object) => InValue[] };
const encoders = new WeakMap<Table, Map<string, Encoder>>();

/**
 * `insert into <table> (…) values (…)` for rows of one shape, with values encoded as drizzle
 * would (JSON columns as text, booleans as 0/1). The SQL text is built once per table and set of
 * keys: on the hot paths a drizzle builder costs more than the statement it builds.
 */
export function insertRows<T extends Table>(
  table: T,
  rows: T["$inferInsert"][],
  suffix = "",
): Statement {
  // Rows may leave out different optional keys: every key any row has becomes a column.
  const keys = [...new Set(rows.flatMap((row) => Object.keys(row as object)))];
  const encoder = encoderFor(table, keys);
  const tuple = `(${encoder.placeholders})`;
  return {
    sql: `insert into ${quote(getTableName(table))} (${encoder.names}) values ${rows.map(() => tuple).join(", ")}${suffix}`,
    args: rows.flatMap((row) => encoder.values(row)),
  };
}

/** `update <table> set … where <condition>`, the set values encoded as drizzle would. */
export function updateRow<T extends Table>(
  table: T,
  set: Partial<T["$inferInsert"]>,
  condition: string,
  ...conditionArgs: InValue[]
): Statement {
  const keys = Object.keys(set);
  const encoder = encoderFor(table, keys);
  const assignments = encoder.names
    .split(", ")
    .map((name) => `${name} = ?`)
    .join(", ");
  return {
    sql: `update ${quote(getTableName(table))} set ${assignments} where ${condition}`,
    args: [...encoder.values(set), ...conditionArgs],
  };
}

function encoderFor(table: Table, keys: string[]): Encoder {
  let byKeys = encoders.get(table);
  if (!byKeys) encoders.set(table, (byKeys = new Map()));
  const id = keys.join(",");
  let encoder = byKeys.get(id);
  if (!encoder) {
    const columns = getTableColumns(table);
    const used = keys.map((key) => {
      const column = columns[key];
      if (!column) throw new Error(`${getTableName(table)} has no column for '${key}'`);
      return [key, column] as const;
    });
    encoder = {
      names: used.map(([, column]) => quote(column.name)).join(", "),
      placeholders: used.map(() => "?").join(", "),
      values: (row) =>
        used.map(([key, column]) => {
          const value = (row as Record<string, unknown>)[key];
          return value === null || value === undefined
            ? null
            : (column.mapToDriverValue(value) as InValue);
        }),
    };
    byKeys.set(id, encoder);
  }
  return encoder;
}

const quote = (name: string) => `"${name}"`;
