import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { writeTransaction } from "@/db/client";
import { appendEvent, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { freshDatabase } from "../support/database";
import {
  makeAgentKey,
  makeQueue,
  makeReviewer,
  type TestAgent,
  type TestReviewer,
} from "../support/factories";
import { decideOverApi, loggedEvents, newestSeq, pauseNewRun } from "../support/flows";
import { apiClient, type ApiClient } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { openSse, type SseClient } from "../support/sse";

// GET /api/v1/stream against a real server: the wire format, replay after Last-Event-ID, the
// seam between replay and live events, and who may see what (lib/README.md, invariants 3 and 7).

let server: TestServer;
let queueA: { id: string; name: string };
let queueB: { id: string; name: string };
let reviewerA: TestReviewer; // member of A only
let reviewerB: TestReviewer; // member of B only
let reviewerAB: TestReviewer; // member of both
let agentA: TestAgent;
let agentB: TestAgent;
let asAgentA: ApiClient;
let asAgentB: ApiClient;
let asReviewerA: ApiClient;
let asReviewerB: ApiClient;
const opened: SseClient[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase("streams");
  queueA = await makeQueue();
  queueB = await makeQueue();
  reviewerA = await makeReviewer({ queues: [{ name: queueA.name }] });
  reviewerB = await makeReviewer({ queues: [{ name: queueB.name }] });
  reviewerAB = await makeReviewer({ queues: [{ name: queueA.name }, { name: queueB.name }] });
  agentA = await makeAgentKey({ queues: [queueA.name] });
  agentB = await makeAgentKey({ queues: [queueB.name] });
  server = await startServer({
    databaseUrl,
    // The disconnect test opens 25 at a time, 200 in all, with one token: above the default cap
    // of 20, and under 200, so a stream that is not released on close would end in a 429.
    env: { STREAM_HEARTBEAT_MS: "200", STREAMS_PER_CALLER: "100" },
  });
  asAgentA = apiClient(server.baseUrl, agentA.key);
  asAgentB = apiClient(server.baseUrl, agentB.key);
  asReviewerA = apiClient(server.baseUrl, reviewerA.token);
  asReviewerB = apiClient(server.baseUrl, reviewerB.token);
});
afterEach(() => opened.splice(0).forEach((client) => client.close()));
afterAll(() => server?.stop());

async function stream(
  token: string,
  options: { query?: string; lastEventId?: string | number } = {},
): Promise<SseClient> {
  const client = await openSse(`${server.baseUrl}/api/v1/stream${options.query ?? ""}`, {
    token,
    lastEventId: options.lastEventId,
  });
  opened.push(client);
  expect(client.status).toBe(200);
  return client;
}

/** Waits for the stream's first bytes: from then on it follows new events. */
const connected = (client: SseClient) =>
  waitUntil(() => client.raw().startsWith("retry:"), {
    timeoutMs: 2000,
    what: "the stream's first bytes",
  });

/** The event ids a client received, in arrival order. */
const idsOf = (client: SseClient) =>
  client.messages.filter((m) => m.id !== null).map((m) => Number(m.id));

/** Waits until `client` has received the event `seq`. */
const received = (client: SseClient, seq: number, timeoutMs = 5000) =>
  client.waitFor((m) => m.id === String(seq), timeoutMs);

describe("GET /api/v1/stream: the wire", () => {
  it("is an uncompressed, unbuffered event stream that sends retry once and heartbeats", async () => {
    const controller = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/v1/stream`, {
      headers: { authorization: `Bearer ${reviewerA.token}`, "accept-encoding": "gzip, br" },
      signal: controller.signal,
    });
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      const cacheControl = response.headers.get("cache-control") ?? "";
      expect(cacheControl).toContain("no-cache");
      expect(cacheControl).toContain("no-transform");
      expect(response.headers.get("x-accel-buffering")).toBe("no");
      expect(response.headers.get("content-encoding")).toBeNull();
    } finally {
      controller.abort();
    }

    const client = await stream(reviewerA.token);
    // STREAM_HEARTBEAT_MS=200: three comment heartbeats within a second (the default is 15 s).
    await waitUntil(() => (client.raw().match(/^: keep-alive$/gm) ?? []).length >= 3, {
      timeoutMs: 2000,
      what: "three heartbeat comments",
    });
    expect(client.raw().match(/^retry: \d+$/gm)).toHaveLength(1);
    expect(client.raw().startsWith("retry:")).toBe(true);
  });

  it("delivers a batch made through the API to a connected reviewer as batch.created", async () => {
    const client = await stream(reviewerA.token);
    await connected(client);
    const { run, batch } = await pauseNewRun(asAgentA);

    const message = await client.waitFor(
      (m) => m.event === "batch.created" && m.data.batchId === batch.id,
    );
    expect(message.id).toBe(String(message.data.seq));
    expect(message.data).toMatchObject({
      type: "batch.created",
      runId: run.id,
      batchId: batch.id,
      queueId: queueA.id,
      actor: { kind: "agent", id: agentA.id },
    });
    expect(message.data.data.batch).toMatchObject({
      id: batch.id,
      status: "pending",
      queue: { id: queueA.id },
    });
    expect(message.data.data.batch.calls[0]).toMatchObject({
      id: batch.calls[0].id,
      toolName: "refund_order",
    });
    expect(new Date(message.data.at).toISOString()).toBe(message.data.at);
  });
});

describe("GET /api/v1/stream: replay after Last-Event-ID", () => {
  beforeAll(async () => {
    // A long history: 1,200 events for A interleaved with 300 for B, written by this process (not
    // the server), so replays span several filtered pages and take a while, and the server's
    // tailer finds these rows by polling.
    await writeTransaction(async (tx) => {
      for (let i = 0; i < 1500; i++) {
        await appendEvent(tx, {
          type: "test.synthetic",
          queueId: i % 5 === 4 ? queueB.id : queueA.id,
          actor: SYSTEM_ACTOR,
          data: { i },
        });
      }
    });
  });

  /** A little history in both queues; returns the seq just before it. */
  async function someHistory() {
    const before = await newestSeq();
    const first = await pauseNewRun(asAgentA);
    await pauseNewRun(asAgentB);
    const second = await pauseNewRun(asAgentA);
    await decideOverApi(asReviewerA, first.batch.calls[0]);
    await pauseNewRun(asAgentB);
    await decideOverApi(asReviewerA, second.batch.calls[0], "reject");
    return before;
  }

  for (const via of ["header", "query"] as const) {
    it(`replays every later event of the reviewer's queues in order and once (${via}), then live ones`, async () => {
      const before = await someHistory();
      const expected = (await loggedEvents(before, [queueA.id])).map((e) => e.seq);
      expect(expected.length).toBeGreaterThanOrEqual(8);
      const from = expected[1]!; // the client saw the first two events of the history

      const client =
        via === "header"
          ? await stream(reviewerA.token, { lastEventId: from })
          : await stream(reviewerA.token, { query: `?lastEventId=${from}` });
      await received(client, expected.at(-1)!);
      expect(idsOf(client)).toEqual(expected.slice(2));
      expect(client.messages.every((m) => m.data.queueId === queueA.id)).toBe(true);

      const { batch } = await pauseNewRun(asAgentA);
      await client.waitFor((m) => m.event === "batch.created" && m.data.batchId === batch.id);
      const withLive = (await loggedEvents(from, [queueA.id])).map((e) => e.seq);
      expect(withLive.slice(0, -2)).toEqual(expected.slice(2)); // then the live run.created, batch.created
      expect(idsOf(client)).toEqual(withLive);
    });
  }

  it("replays past its page size, skipping other queues' events, with Last-Event-ID 0 meaning everything", async () => {
    const expected = (await loggedEvents(0, [queueA.id])).map((e) => e.seq);
    expect(expected.length).toBeGreaterThan(1200);

    const client = await stream(reviewerA.token, { lastEventId: 0 });
    await received(client, expected.at(-1)!, 10_000);
    expect(idsOf(client)).toEqual(expected);
  });

  it("loses and repeats nothing when clients reconnect while events are being written", async () => {
    // The seam between replay and live: events committed while a stream replays must come exactly once.
    let writing = true;
    const writer = (async () => {
      try {
        for (let i = 0; i < 30; i++) {
          const { batch } = await pauseNewRun(i % 3 === 2 ? asAgentB : asAgentA);
          if (i % 3 === 0) await decideOverApi(asReviewerA, batch.calls[0]);
        }
      } finally {
        writing = false;
      }
    })();

    const clients: { from: number; client: SseClient }[] = [];
    for (let k = 0; writing && k < 12; k++) {
      // Every third client replays the whole history (long enough for writes to land meanwhile);
      // the others are a little behind the head, or at it.
      const from = k % 3 === 0 ? 0 : Math.max(0, (await newestSeq()) - (k % 4));
      clients.push({ from, client: await stream(reviewerA.token, { lastEventId: from }) });
      await sleep(15);
    }
    await writer;
    expect(clients.length).toBeGreaterThanOrEqual(3);

    const expectations = [];
    for (const { from, client } of clients) {
      const expected = (await loggedEvents(from, [queueA.id])).map((e) => e.seq);
      // A client that joined after queue A's last write (the writer ends on queue B's) expects none.
      if (expected.length > 0) await received(client, expected.at(-1)!);
      expectations.push({ client, expected });
    }
    // compared after every wait, so that a stray event has had time to reach a client expecting none
    for (const { client, expected } of expectations) expect(idsOf(client)).toEqual(expected);
  });

  it("answers an id the log never gave out with a resync event first, then follows live events", async () => {
    const client = await stream(reviewerA.token, { lastEventId: (await newestSeq()) + 1000 });
    await client.waitFor((m) => m.event === "resync");
    expect(client.messages[0]!.event).toBe("resync");

    await connected(client);
    const { batch } = await pauseNewRun(asAgentA);
    await client.waitFor((m) => m.event === "batch.created" && m.data.batchId === batch.id);
    expect(client.messages.map((m) => m.event)).toEqual(["resync", "run.created", "batch.created"]);
  });
});

describe("GET /api/v1/stream: who sees what", () => {
  it("never sends a reviewer another queue's events, on replay or live", async () => {
    expect((await loggedEvents(0, [queueB.id])).length).toBeGreaterThan(0); // there is something to leak

    const onlyA = await stream(reviewerA.token, { lastEventId: 0 });
    const onlyB = await stream(reviewerB.token, { lastEventId: 0 });
    const { batch: inB } = await pauseNewRun(asAgentB);
    const { batch: inA } = await pauseNewRun(asAgentA);
    await decideOverApi(asReviewerB, inB.calls[0]);
    await decideOverApi(asReviewerA, inA.calls[0]);

    // Events arrive in log order, so once each stream has its own queue's last event, anything
    // of the other queue written before it would have arrived already.
    const newest = await newestSeq();
    await onlyA.waitFor((m) => m.event === "batch.decided" && m.data.batchId === inA.id);
    await onlyB.waitFor((m) => m.event === "batch.decided" && m.data.batchId === inB.id);
    await received(onlyB, (await loggedEvents(0, [queueB.id])).at(-1)!.seq);
    expect(Math.max(...idsOf(onlyA))).toBe(newest);

    expect(onlyA.messages.every((m) => m.data.queueId === queueA.id)).toBe(true);
    expect(onlyB.messages.every((m) => m.data.queueId === queueB.id)).toBe(true);
    expect(idsOf(onlyA)).toEqual((await loggedEvents(0, [queueA.id])).map((e) => e.seq));
    expect(idsOf(onlyB)).toEqual((await loggedEvents(0, [queueB.id])).map((e) => e.seq));
    expect(onlyA.raw()).not.toContain(inB.id);
    expect(onlyB.raw()).not.toContain(inA.id);
  });

  it("narrows to the named queues, and all of the reviewer's queues when none is named", async () => {
    const both = await stream(reviewerAB.token, { lastEventId: 0 });
    const named = await stream(reviewerAB.token, { query: `?queue=${queueB.id}`, lastEventId: 0 });
    const { batch } = await pauseNewRun(asAgentA);
    const { batch: inB } = await pauseNewRun(asAgentB);

    await both.waitFor((m) => m.data.batchId === inB.id);
    await named.waitFor((m) => m.data.batchId === inB.id);
    expect(idsOf(both)).toEqual((await loggedEvents(0, [queueA.id, queueB.id])).map((e) => e.seq));
    expect(idsOf(named)).toEqual((await loggedEvents(0, [queueB.id])).map((e) => e.seq));
    expect(named.raw()).not.toContain(batch.id);
  });

  it("is 404 for a queue the reviewer does not belong to (or that does not exist), 403 for agents, 401 without credentials", async () => {
    const status = async (query: string, token?: string) => {
      const response = await apiClient(server.baseUrl, token).get(`/stream${query}`);
      return [response.status, response.body?.error?.code];
    };
    expect(await status(`?queue=${queueB.id}`, reviewerA.token)).toEqual([404, "not_found"]);
    expect(await status(`?queue=${queueA.id}&queue=${queueB.id}`, reviewerA.token)).toEqual([
      404,
      "not_found",
    ]);
    expect(await status(`?queue=no-such-queue`, reviewerA.token)).toEqual([404, "not_found"]);
    expect(await status("", agentA.key)).toEqual([403, "forbidden"]);
    expect(await status("")).toEqual([401, "unauthenticated"]);
    expect(await status("", "cs_rev_not-a-real-token")).toEqual([401, "unauthenticated"]);
  });

  it("is 400 for a Last-Event-ID that is not an event id", async () => {
    for (const bad of ["abc", "-1", "1.5", "12abc", "1e3"]) {
      const viaHeader = await asReviewerA.get("/stream", { "last-event-id": bad });
      expect(viaHeader.status, `Last-Event-ID: ${bad}`).toBe(400);
      expect(viaHeader.body.error.code).toBe("invalid_request");
      const viaQuery = await asReviewerA.get(`/stream?lastEventId=${encodeURIComponent(bad)}`);
      expect(viaQuery.status, `?lastEventId=${bad}`).toBe(400);
    }
  });
});

describe("GET /api/v1/stream: disconnects", () => {
  it("cleans up after clients that go away: 200 open-and-close later, the server is quick and streams still work", async () => {
    const outputBefore = server.output().length;
    for (let round = 0; round < 8; round++) {
      const clients = await Promise.all(Array.from({ length: 25 }, () => stream(reviewerA.token)));
      await Promise.all(clients.map(connected));
      clients.forEach((c) => c.close());
    }
    opened.splice(0);
    // Leaked streams would keep heartbeating (every 200 ms here) into closed connections.
    await sleep(700);

    const started = Date.now();
    const health = await fetch(`${server.baseUrl}/api/health`);
    expect(health.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(1000);

    const client = await stream(reviewerA.token);
    await connected(client);
    const { batch } = await pauseNewRun(asAgentA);
    await client.waitFor((m) => m.event === "batch.created" && m.data.batchId === batch.id, 2000);
    expect(server.output().slice(outputBefore)).not.toMatch(/error|invalid state|closed/i);
  });
});
