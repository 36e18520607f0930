import { and, asc, gt, inArray, max, type SQL } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events, type EventRow } from "@/db/schema";
import { InvalidRequestError } from "@/lib/errors";
import { sseMessage, sseMessages } from "./wire";
import { getTailer } from "./tailer";
import { onRequestEnd } from "@/lib/shutdown";
import { watchCredential, type Credential } from "@/lib/auth/credential-watch";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

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
const PREAMBLE = encoder.encode("retry: 2000\n: connected\n\n");
const KEEP_ALIVE = encoder.encode(": keep-alive\n\n");

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

/** The Last-Event-ID a client sent (header, else `?lastEventId=`): null for none, 400 for junk. */
export function lastEventIdOf(headers: Headers, url: URL): number | null {
  const raw = headers.get("last-event-id") ?? url.searchParams.get("lastEventId");
  if (raw === null || raw === "") return null;
  if (!/^\d{1,15}$/.test(raw)) {
    throw new InvalidRequestError("Last-Event-ID must be an event id (a non-negative integer).", [
      { path: "Last-Event-ID", message: "must be a non-negative integer" },
    ]);
  }
  return Number(raw);
}

export function heartbeatMs(): number {
  return setting("STREAM_HEARTBEAT_MS");
}

/** The headers of every event stream, whichever server writes it. */
export const EVENT_STREAM_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no",
  // The connection carries this stream only: when the stream ends (the client left, or the
  // server is stopping) close it rather than keep it idle until the keep-alive timeout.
  connection: "close",
};

/**
 * Where a stream's bytes go: a web ReadableStream (route handlers, `next dev`) or a Node
 * ServerResponse (lib/http/node-stream.ts, the production server). The stream logic below is
 * written once against it.
 */
export type StreamSink = {
  write(chunk: Uint8Array): void;
  /** how many written chunks the client has not taken yet (a slow client's backlog) */
  queued(): number;
  /** ends the stream; called at most once */
  end(): void;
};

/**
 * Follows the event log into `sink`: the `retry:` preamble, the replay after `lastEventId`, then
 * live events, heartbeats, and the endings (membership change, a client too far behind, the
 * server stopping, `signal` aborting, the `credential` it was opened with being revoked or its
 * session ended). Returns the function that ends it (the client left).
 */
export function followEvents(
  sink: StreamSink,
  filter: StreamFilter,
  lastEventId: number | null,
  signal?: AbortSignal,
  credential?: Credential,
): () => void {
  const tailer = getTailer();
  let cursor = 0; // the highest seq sent (or skipped as invisible) so far
  let replaying = true;
  let buffered: EventRow[] = [];
  let closed = false;
  let cleanup = () => {};
  const close = () => {
    if (closed) return;
    closed = true;
    stopWatching();
    cleanup();
    sink.end();
  };
  // A revoked key or a signed-out session must not keep receiving what it can no longer ask for.
  const stopWatching = credential ? watchCredential(credential, close) : () => {};
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
      if (sink.queued() > MAX_QUEUED_MESSAGES) return close();
      sink.write(chunk);
    }
    if (filter.endsAfter && fresh.some(filter.endsAfter)) close();
  };

  async function start() {
    const unsubscribe = await tailer.subscribe((rows) => {
      if (!replaying) return send(rows);
      buffered.push(...rows);
      // Live events waiting behind a long replay are capped like a slow client's queue.
      if (buffered.length > MAX_QUEUED_MESSAGES) close();
    });
    if (closed) return void unsubscribe();
    const heartbeat = setInterval(() => {
      if (!closed) sink.write(KEEP_ALIVE);
    }, heartbeatMs());
    let stopListening = () => {};
    cleanup = () => {
      unsubscribe();
      clearInterval(heartbeat);
      stopListening();
    };
    // Ends when the client leaves or the server is stopping (see lib/shutdown.ts).
    stopListening = onRequestEnd(signal, close);
    if (closed) return;

    sink.write(PREAMBLE);
    try {
      cursor = await tailer.position();
      if (lastEventId !== null) await replay(lastEventId);
    } catch (error) {
      log().error({ err: error }, "Replaying events failed");
      return close();
    }
    replaying = false;
    const waiting = buffered;
    buffered = [];
    send(waiting);
  }

  async function replay(after: number) {
    const live = cursor;
    const [newest] = await getDb()
      .select({ seq: max(events.seq) })
      .from(events);
    if (closed) return;
    if (after > (newest?.seq ?? 0)) {
      // An id this log never gave out (say, from before a reset): the client must refetch.
      sink.write(encoder.encode(`event: resync\ndata: {"reason":"unknown_last_event_id"}\n\n`));
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
      if (closed) return;
      for (const row of rows) {
        sink.write(sseMessage(row));
        from = row.seq;
      }
      if (rows.length < REPLAY_PAGE) break;
      // A long backlog is read a page at a time as the client takes it, not all into memory.
      while (sink.queued() > REPLAY_PAGE && !closed) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      if (closed) return;
    }
    // Rows up to `live` came from the replay; later ones arrive through the buffer.
    cursor = Math.max(live, from);
  }

  start().catch((error) => {
    log().error({ err: error }, "Opening an event stream failed");
    close();
  });
  return close;
}

/** A stream as a route handler's Response (the web-stream sink; `next dev` serves these). */
export async function eventStreamResponse(
  request: Request,
  filter: StreamFilter,
  credential?: Credential,
  /** called once when the stream ends, however it ends (a stream slot's release) */
  onEnd: () => void = () => {},
): Promise<Response> {
  let lastEventId: ReturnType<typeof lastEventIdOf>;
  try {
    lastEventId = lastEventIdOf(request.headers, new URL(request.url));
  } catch (error) {
    onEnd();
    throw error;
  }
  let stop = () => {};
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      let ended = false;
      const sink: StreamSink = {
        write: (chunk) => {
          if (!ended) controller.enqueue(chunk);
        },
        // With the default strategy (one chunk), desiredSize is 1 − the chunks queued.
        queued: () => 1 - (controller.desiredSize ?? 1),
        end: () => {
          ended = true;
          onEnd();
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        },
      };
      stop = followEvents(sink, filter, lastEventId, request.signal, credential);
    },
    cancel() {
      onEnd();
      stop();
    },
  });
  return new Response(stream, { headers: EVENT_STREAM_HEADERS });
}

export function queueFilter(queueIds: string[]): StreamFilter {
  const set = new Set(queueIds);
  return {
    where: inArray(events.queueId, queueIds),
    visible: (row) => row.queueId !== null && set.has(row.queueId),
    shareKey: `queues:${[...set].sort().join(",")}`,
  };
}
