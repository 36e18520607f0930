import { eventStreamResponse } from "@/lib/events/open-stream";
import { runStreamFilter, queueStreamFilter } from "@/lib/events/stream-scope";
import { takeStreamSlot } from "@/lib/events/stream-slots";
import { defineEndpoint } from "../endpoint";

export const streamEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/runs/{runId}/stream",
    auth: "either",
    operationId: "streamRun",
    tag: "Streams",
    summary: "Server-sent events of this run",
    description: "Replays after Last-Event-ID (header or ?lastEventId=), then live.",
    ok: { status: 200, schema: "EventStream" },
    errors: [400, 401, 404],
    handler: async ({ request, params, actor, credential }) => {
      const filter = await runStreamFilter(actor, params.runId);
      return eventStreamResponse(request, filter, credential, takeStreamSlot(actor));
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/stream",
    auth: "reviewer",
    operationId: "streamQueues",
    tag: "Streams",
    summary: "Server-sent events of the reviewer's queues (?queue=ID repeatable)",
    ok: { status: 200, schema: "EventStream" },
    errors: [400, 401, 403, 404],
    handler: async ({ request, actor, credential }) => {
      const queues = new URL(request.url).searchParams.getAll("queue");
      const filter = await queueStreamFilter(actor, queues);
      return eventStreamResponse(request, filter, credential, takeStreamSlot(actor));
    },
  }),
];
