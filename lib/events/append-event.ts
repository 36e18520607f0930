import type { ResultSet } from "@libsql/client";
import type { Executor } from "@/db/client";
import { events, type ActorKind, type EventRow } from "@/db/schema";
import { insertRows, type Statement } from "@/db/write-batch";

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

/** An event as the row it is written as (its `seq` comes from the database). */
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
  const [row] = await tx.insert(events).values(eventRow(event)).returning({ seq: events.seq });
  return row!.seq;
}

/** Appends several rows, in order, in one statement. */
export async function appendEvents(tx: Executor, batch: NewEvent[]): Promise<void> {
  if (batch.length > 0) await tx.insert(events).values(batch.map(eventRow));
}

/** The rows each event INSERT of a write batch carries, to hand them to the streams once committed. */
const rowsOfStatement = new WeakMap<Statement, ReturnType<typeof eventRow>[]>();

/** The INSERT of event rows, to send inside a write batch (db/write-batch.ts). */
export function eventRows(...batch: NewEvent[]): Statement {
  const rows = batch.map(eventRow);
  const statement = insertRows(events, rows, " returning seq");
  rowsOfStatement.set(statement, rows);
  return statement;
}

/**
 * The event rows a committed write batch appended, with the `seq` each got, in `seq` order: what
 * the streams need, without reading the rows back. (One INSERT gives its rows increasing `seq`s
 * in the order of its VALUES; RETURNING promises no order, so the `seq`s are sorted first.)
 */
export function eventsWritten(statements: Statement[], results: ResultSet[]): EventRow[] {
  return statements.flatMap((statement, i) => {
    const rows = rowsOfStatement.get(statement);
    if (!rows) return [];
    const seqs = results[i]!.rows.map((r) => Number(r[0])).sort((a, b) => a - b);
    return rows.map((row, j) => ({ ...row, seq: seqs[j]! }));
  });
}
