import type { Executor } from "@/db/client";
import { events, type ActorKind } from "@/db/schema";
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

/** The INSERT of event rows, to send inside a write batch (db/write-batch.ts). */
export function eventRows(...batch: NewEvent[]): Statement {
  return insertRows(events, batch.map(eventRow));
}
