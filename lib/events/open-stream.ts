import { and, asc, gt, inArray, max, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events, type EventRow } from "@/db/schema";
import { InvalidRequestError } from "@/lib/errors";
import { sseMessage, sseMessages } from "./wire";
import { getTailer } from "./tailer";
import { onRequestEnd } from "@/lib/shutdown";

// A server-sent-event stream over the event log: replay what the client missed (after its
// Last-Event-ID), then follow new events as the tailer dispatches them. Only events `visible` to
// the caller are sent, on replay and live alike.

export type StreamFilter = {
  /** the SQL condition selecting the caller's events, for replay */
  where: SQL | undefined;
  /** the same condition on a row, for live events */
  visible: (row: EventRow) => boolean;
  /**
   * A live event after which what the caller may see has changed (their membership did): the
   * stream ends there, and the client's reconnect (with Last-Event-ID) is answered under the new
   * visibility. Never applied on replay, where visibility is already that of the reconnect.
   */
  endsAfter?: (row: EventRow) => boolean;
  /**
   * Names what `visible` lets through when it depends on nothing but this key (a set of queues, a
   * run): streams with the same key share one filtered, encoded chunk per tailer read, so a
   * thousand streams of one team cost one filter and one encoding per event, not a thousand.
   */
  shareKey?: string;
};

const REPLAY_PAGE = 500;
/** A client this many messages behind is cut off; it reconnects with Last-Event-ID and replays. */
const MAX_QUEUED_MESSAGES = 10_000;

const encoder = new TextEncoder();

/** Per tailer read (the one array every stream is handed): the chunk for each share key, or null. */
const chunksByRead = new WeakMap<EventRow[], Map<string, Uint8Array | null>>();

/** The SSE chunk of the rows `filter` lets through, or null when it lets none through. */
function visibleChunk(
  rows: EventRow[],
  filter: StreamFilter,
  shareKey: string | undefined,
): Uint8Array | null {
  const encode = () => {
    const visible = rows.filter(filter.visible);
    if (visible.length === 0) return null;
    return sseMessages(visible.length === rows.length ? rows : visible);
  };
  if (shareKey === undefined) return encode();
  let byKey = chunksByRead.get(rows);
  if (!byKey) chunksByRead.set(rows, (byKey = new Map()));
  let chunk = byKey.get(shareKey);
  if (chunk === undefined) byKey.set(shareKey, (chunk = encode()));
  return chunk;
}

export function lastEventIdOf(request: Request): number | null {
  const raw =
    request.headers.get("last-event-id") ?? new URL(request.url).searchParams.get("lastEventId");
  if (raw === null || raw === "") return null;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new InvalidRequestError("Last-Event-ID must be an event id (a non-negative integer).", [
      { path: "Last-Event-ID", message: "must be a non-negative integer" },
    ]);
  }
  return Number(raw);
}

export function heartbeatMs(): number {
  return Number(process.env.STREAM_HEARTBEAT_MS) || 15_000;
}

export async function eventStreamResponse(
  request: Request,
  filter: StreamFilter,
): Promise<Response> {
  const lastEventId = lastEventIdOf(request);
  const tailer = getTailer();
  let cursor = 0; // the highest seq sent (or skipped as invisible) so far
  let replaying = true;
  const buffered: EventRow[] = [];
  let cleanup = () => {};

  const stream = new ReadableStream<Uint8Array>({
    async start(controller) {
      let closed = false;
      const close = () => {
        if (closed) return;
        closed = true;
        cleanup();
        try {
          controller.close();
        } catch {
          // already closed by the client
        }
      };
      // Everything new and visible in `rows`, in one write: one chunk per tailer read, costs far
      // less than one per event, and streams with the same visibility share it (see shareKey).
      const send = (rows: EventRow[]) => {
        if (closed || rows.length === 0) return;
        // Live reads are all new; only the first after a replay may overlap what it sent.
        const fresh = rows[0]!.seq > cursor ? rows : rows.filter((row) => row.seq > cursor);
        if (fresh.length === 0) return;
        cursor = fresh[fresh.length - 1]!.seq;
        const chunk = visibleChunk(fresh, filter, fresh === rows ? filter.shareKey : undefined);
        if (chunk) {
          if ((controller.desiredSize ?? 0) < -MAX_QUEUED_MESSAGES) return close();
          controller.enqueue(chunk);
        }
        if (filter.endsAfter && fresh.some(filter.endsAfter)) close();
      };

      const unsubscribe = await tailer.subscribe((rows) => {
        if (!replaying) return send(rows);
        buffered.push(...rows);
        // Live events waiting behind a long replay are capped like a slow client's queue.
        if (buffered.length > MAX_QUEUED_MESSAGES) close();
      });
      const heartbeat = setInterval(() => {
        if (!closed) controller.enqueue(encoder.encode(": keep-alive\n\n"));
      }, heartbeatMs());
      let stopListening = () => {};
      cleanup = () => {
        unsubscribe();
        clearInterval(heartbeat);
        stopListening();
      };
      // Ends when the client leaves or the server is stopping (see lib/shutdown.ts).
      stopListening = onRequestEnd(request.signal, close);
      if (closed) return;

      controller.enqueue(encoder.encode("retry: 2000\n: connected\n\n"));
      try {
        cursor = await tailer.position();
        if (lastEventId !== null) await replay(lastEventId, controller, () => closed);
      } catch (error) {
        console.error("Replaying events failed:", error);
        return close();
      }
      replaying = false;
      send(buffered.splice(0));
    },
    cancel() {
      cleanup();
    },
  });

  async function replay(
    after: number,
    controller: ReadableStreamDefaultController<Uint8Array>,
    isClosed: () => boolean,
  ) {
    const live = cursor;
    const [newest] = await getDb()
      .select({ seq: max(events.seq) })
      .from(events);
    if (after > (newest?.seq ?? 0)) {
      // An id this log never gave out (say, from before a reset): the client must refetch.
      controller.enqueue(
        encoder.encode(`event: resync\ndata: {"reason":"unknown_last_event_id"}\n\n`),
      );
      return;
    }
    let from = after;
    for (;;) {
      const rows = await getDb()
        .select()
        .from(events)
        .where(and(gt(events.seq, from), filter.where))
        .orderBy(asc(events.seq))
        .limit(REPLAY_PAGE);
      if (isClosed()) return;
      for (const row of rows) {
        controller.enqueue(sseMessage(row));
        from = row.seq;
      }
      if (rows.length < REPLAY_PAGE) break;
      // A long backlog is read a page at a time as the client takes it, not all into memory.
      while ((controller.desiredSize ?? 0) < -REPLAY_PAGE && !isClosed()) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (isClosed()) return;
    }
    // Rows up to `live` came from the replay; later ones arrive through the buffer.
    cursor = Math.max(live, from);
  }

  return new Response(stream, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-accel-buffering": "no",
      // The connection carries this stream only: when the stream ends (the client left, or the
      // server is stopping) close it rather than keep it idle until the keep-alive timeout.
      connection: "close",
    },
  });
}

export function queueFilter(queueIds: string[]): StreamFilter {
  const set = new Set(queueIds);
  return {
    where: inArray(events.queueId, queueIds),
    visible: (row) => row.queueId !== null && set.has(row.queueId),
    shareKey: `queues:${[...set].sort().join(",")}`,
  };
}
