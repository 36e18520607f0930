import type { EventRow } from "@/db/schema";
import { isoTime } from "@/lib/ids";

/** An event as streams and the API show it. */
export type WireEvent = {
  seq: number;
  type: string;
  at: string;
  runId: string | null;
  batchId: string | null;
  callId: string | null;
  queueId: string | null;
  actor: { kind: string; id: string | null; name: string | null };
  data: Record<string, unknown>;
};

export function toWireEvent(row: EventRow): WireEvent {
  return {
    seq: row.seq,
    type: row.type,
    at: isoTime(row.at),
    runId: row.runId,
    batchId: row.batchId,
    callId: row.callId,
    queueId: row.queueId,
    actor: { kind: row.actorKind, id: row.actorId, name: row.actorName },
    data: row.data,
  };
}

const encoder = new TextEncoder();
const encoded = new WeakMap<EventRow, Uint8Array>();

const encodedTogether = new WeakMap<EventRow[], Uint8Array>();

/** The SSE messages of several events as one chunk; cached per array, as the tailer hands the same one to every stream. */
export function sseMessages(rows: EventRow[]): Uint8Array {
  if (rows.length === 1) return sseMessage(rows[0]!);
  let bytes = encodedTogether.get(rows);
  if (!bytes) {
    bytes = Buffer.concat(rows.map(sseMessage));
    encodedTogether.set(rows, bytes);
  }
  return bytes;
}

/** The SSE message for an event, encoded once however many streams send it. */
export function sseMessage(row: EventRow): Uint8Array {
  let bytes = encoded.get(row);
  if (!bytes) {
    bytes = encoder.encode(
      `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(toWireEvent(row))}\n\n`,
    );
    encoded.set(row, bytes);
  }
  return bytes;
}
