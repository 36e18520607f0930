import type { ResultSet } from "@libsql/client";
import { sql, type SQL } from "drizzle-orm";
import type { Executor } from "@/db/client";
import type { ActorKind, EventRow } from "@/db/schema";
import type { Statement } from "@/db/write-batch";
import { chainedInsert } from "./event-chain";

export type EventActor = { kind: ActorKind; id: string | null; name: string | null };

export const SYSTEM_ACTOR: EventActor = { kind: "system", id: null, name: "Countersign" };

export type NewEvent = {
  type: string;
  runId?: string | null;
  batchId?: string | null;
  callId?: string | null;
  queueId: string | null;
  actor: EventActor;
  data?: Record<string, unknown>;
  at?: number;
};

/** An event as the row it is written as (its `seq` and `hash` come from the database). */
export const eventRow = (event: NewEvent) => ({
  type: event.type,
  at: event.at ?? Date.now(),
  runId: event.runId ?? null,
  batchId: event.batchId ?? null,
  callId: event.callId ?? null,
  queueId: event.queueId,
  actorKind: event.actor.kind,
  actorId: event.actor.id,
  actorName: event.actor.name,
  data: event.data ?? {},
});

/** Appends one row to the event log inside the caller's transaction; returns its `seq`. */
export async function appendEvent(tx: Executor, event: NewEvent): Promise<number> {
  const [row] = await tx.all<[number]>(asDrizzle(eventRows(event)));
  return Number(row![0]);
}

/** Appends several rows, in order, in one statement. */
export async function appendEvents(tx: Executor, batch: NewEvent[]): Promise<void> {
  if (batch.length > 0) await tx.run(asDrizzle(eventRows(...batch)));
}

/** The rows each event INSERT of a write batch carries, to hand them to the streams once committed. */
const rowsOfStatement = new WeakMap<Statement, ReturnType<typeof eventRow>[]>();

/**
 * The INSERT of event rows, to send inside a write batch (db/write-batch.ts). Each row is chained
 * to the one before it in the same statement (lib/events/event-chain.ts), and answers `seq, hash`.
 */
export function eventRows(...batch: NewEvent[]): Statement {
  const rows = batch.map(eventRow);
  const statement = chainedInsert(
    rows.map((row) => [
      row.type,
      row.at,
      row.runId,
      row.batchId,
      row.callId,
      row.queueId,
      row.actorKind,
      row.actorId,
      row.actorName,
      JSON.stringify(row.data),
    ]),
  );
  rowsOfStatement.set(statement, rows);
  return statement;
}

/**
 * The event rows a committed write batch appended, with the `seq` and chain `hash` each got, in
 * `seq` order: what the streams need, without reading the rows back. (One INSERT gives its rows
 * increasing `seq`s in the order of its VALUES; RETURNING promises no order, so they are sorted.)
 */
export function eventsWritten(statements: Statement[], results: ResultSet[]): EventRow[] {
  return statements.flatMap((statement, i) => {
    const rows = rowsOfStatement.get(statement);
    if (!rows) return [];
    const written = results[i]!.rows.map((r) => ({ seq: Number(r[0]), hash: String(r[1]) }));
    written.sort((a, b) => a.seq - b.seq);
    return rows.map((row, j) => ({ ...row, ...written[j]! }));
  });
}

/** A `?`-placeholder statement as drizzle SQL, for the callers that write inside a transaction. */
function asDrizzle(statement: Statement): SQL {
  const parts = statement.sql.split("?");
  return sql.join(
    parts.flatMap((part, i) =>
      i < statement.args.length ? [sql.raw(part), sql`${statement.args[i]}`] : [sql.raw(part)],
    ),
  );
}
