import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { getDb } from "@/db/client";
import { authenticateCredential } from "@/lib/auth/actor";
import { NotFoundError, toResponse } from "@/lib/errors";
import {
  EVENT_STREAM_HEADERS,
  followEvents,
  lastEventIdOf,
  type StreamFilter,
  type StreamSink,
} from "@/lib/events/open-stream";
import { queueStreamFilter, runStreamFilter } from "@/lib/events/stream-scope";
import { takeStreamSlot } from "@/lib/events/stream-slots";
import { API_HEADERS, webHeaders, writeResponse } from "./node-api";

// The two event streams served straight on Node's http server (lib/http/server.ts), not through a
// Next.js route handler: Next's web-stream pipe and per-request bookkeeping cost each open stream
// ~80 KiB and each event ~60 µs per stream, ten times a plain ServerResponse (test/bench/fanout.ts).
// Same contract as GET /stream and GET /runs/{runId}/stream as lib/contract/endpoints/streams.ts
// defines them (which still serve `next dev`): the same authentication, filters, errors and
// headers. Only GET is taken here; every other method goes on to the API's routes
// (lib/http/node-api.ts), which answer it (405 or OPTIONS).

/** A typical event's SSE message, for counting a backlog of bytes in messages (open-stream.ts). */
const QUEUED_MESSAGE_BYTES = 512;

const RUN_STREAM = /^\/api\/v1\/runs\/([^/]+)\/stream$/;

type StreamRoute = (
  actor: Parameters<typeof runStreamFilter>[0],
  url: URL,
) => Promise<StreamFilter>;

/** The stream this request asks for, or null when it is for Next.js. */
export function matchStreamRoute(request: IncomingMessage): StreamRoute | null {
  if (request.method !== "GET" || !request.url?.startsWith("/api/v1/")) return null;
  const end = request.url.indexOf("?");
  const pathname = end === -1 ? request.url : request.url.slice(0, end);
  if (pathname === "/api/v1/stream") {
    return (actor, url) => queueStreamFilter(actor, url.searchParams.getAll("queue"));
  }
  const run = RUN_STREAM.exec(pathname);
  if (!run) return null;
  let runId: string;
  try {
    runId = decodeURIComponent(run[1]!);
  } catch {
    // An escape that does not decode names no run (proxy.ts answers the same for Next's routes).
    return async () => {
      throw new NotFoundError("Endpoint");
    };
  }
  return (actor) => runStreamFilter(actor, runId);
}

/** Serves a stream request `matchStreamRoute` matched: authenticate, scope, then follow the log. */
export async function serveStream(
  request: IncomingMessage,
  response: ServerResponse,
  route: StreamRoute,
): Promise<void> {
  let stop: (() => void) | null = null;
  let release: (() => void) | null = null;
  let gone = false;
  response.once("close", () => {
    gone = true;
    stop?.();
    release?.();
  });
  try {
    const url = new URL(request.url!, "http://localhost");
    const headers = webHeaders(request);
    // In the route handlers' order: 401, then 404, then a bad Last-Event-ID (400), then too many
    // streams (429).
    const { actor, credential } = await authenticateCredential(getDb(), headers);
    const filter = await route(actor, url);
    const lastEventId = lastEventIdOf(headers, url);
    if (gone) return;
    release = takeStreamSlot(actor);
    response.writeHead(200, { ...EVENT_STREAM_HEADERS, ...API_HEADERS });
    // Sent now: a client waits for the head before it counts the stream as open.
    response.flushHeaders();
    stop = followEvents(nodeSink(response), filter, lastEventId, undefined, credential);
  } catch (error) {
    if (!gone) await writeResponse(request, response, toResponse(error));
  }
}

/**
 * The ServerResponse as a stream sink. Its backlog is what the response and its socket hold
 * unsent, in bytes, counted as messages of QUEUED_MESSAGE_BYTES: reading Node's own count costs
 * nothing per write, where counting write callbacks cost one per stream per event.
 */
function nodeSink(response: ServerResponse): StreamSink {
  return {
    write: (chunk) => {
      if (response.writableEnded || response.destroyed) return;
      corkUntilNextTick(response.socket);
      response.write(chunk);
    },
    queued: () => Math.floor(response.writableLength / QUEUED_MESSAGE_BYTES),
    end: () => {
      if (!response.writableEnded && !response.destroyed) response.end();
    },
  };
}

let corked: Socket[] = [];

/**
 * Corks `socket` until the end of this tick, with one process.nextTick for every socket written in
 * it. Node's own write does the same per response, one nextTick each: with Next.js's
 * AsyncLocalStorage in the process, every such tick pays async-context hooks, a cost per stream
 * per event that a tailer read written to thousands of streams multiplied.
 */
function corkUntilNextTick(socket: Socket | null): void {
  if (!socket || socket.writableCorked) return;
  socket.cork();
  if (corked.push(socket) === 1) process.nextTick(uncorkAll);
}

function uncorkAll(): void {
  const sockets = corked;
  corked = [];
  for (const socket of sockets) socket.uncork();
}
