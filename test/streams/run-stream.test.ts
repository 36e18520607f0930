import { and, asc, eq, gt, inArray } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { freshDatabase } from "../support/database";
import {
  makeAgentKey,
  makeQueue,
  makeReviewer,
  type TestAgent,
  type TestReviewer,
} from "../support/factories";
import { decideOverApi, pauseNewRun } from "../support/flows";
import { apiClient, type ApiClient } from "../support/http";
import { waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { openSse, type SseClient } from "../support/sse";

// GET /api/v1/runs/{runId}/stream: one run's events, for its agent or a reviewer of its queue.

let server: TestServer;
let queueA: { id: string; name: string };
let queueB: { id: string; name: string };
let reviewerA: TestReviewer;
let reviewerB: TestReviewer;
let agent: TestAgent; // may target A and B
let otherAgent: TestAgent;
let asAgent: ApiClient;
let asReviewerA: ApiClient;
let asReviewerB: ApiClient;
const opened: SseClient[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase("run-stream");
  queueA = await makeQueue();
  queueB = await makeQueue();
  reviewerA = await makeReviewer({ queues: [{ name: queueA.name }] });
  reviewerB = await makeReviewer({ queues: [{ name: queueB.name }] });
  agent = await makeAgentKey({ queues: [queueA.name, queueB.name] });
  otherAgent = await makeAgentKey({ queues: [queueA.name] });
  server = await startServer({ databaseUrl, env: { STREAM_HEARTBEAT_MS: "200" } });
  asAgent = apiClient(server.baseUrl, agent.key);
  asReviewerA = apiClient(server.baseUrl, reviewerA.token);
  asReviewerB = apiClient(server.baseUrl, reviewerB.token);
});
afterEach(() => opened.splice(0).forEach((client) => client.close()));
afterAll(() => server?.stop());

async function runStream(runId: string, token: string, lastEventId?: number): Promise<SseClient> {
  const client = await openSse(`${server.baseUrl}/api/v1/runs/${runId}/stream`, {
    token,
    lastEventId,
  });
  opened.push(client);
  expect(client.status).toBe(200);
  return client;
}

const idsOf = (client: SseClient) =>
  client.messages.filter((m) => m.id !== null).map((m) => Number(m.id));

/** The run's events in the log, optionally only those of some queues. */
async function runEvents(runId: string, queueIds?: string[]) {
  const rows = await getDb()
    .select({ seq: events.seq })
    .from(events)
    .where(
      and(
        eq(events.runId, runId),
        gt(events.seq, 0),
        queueIds ? inArray(events.queueId, queueIds) : undefined,
      ),
    )
    .orderBy(asc(events.seq));
  return rows.map((r) => r.seq);
}

describe("GET /api/v1/runs/{runId}/stream", () => {
  it("is an unbuffered event stream with retry once and heartbeats", async () => {
    const { run } = await pauseNewRun(asAgent);
    const controller = new AbortController();
    const response = await fetch(`${server.baseUrl}/api/v1/runs/${run.id}/stream`, {
      headers: { authorization: `Bearer ${agent.key}` },
      signal: controller.signal,
    });
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(response.headers.get("cache-control")).toMatch(
        /no-cache.*no-transform|no-transform.*no-cache/,
      );
      expect(response.headers.get("x-accel-buffering")).toBe("no");
    } finally {
      controller.abort();
    }
    const client = await runStream(run.id, agent.key);
    await waitUntil(() => (client.raw().match(/^: keep-alive$/gm) ?? []).length >= 2, {
      timeoutMs: 2000,
      what: "two heartbeat comments",
    });
    expect(client.raw().match(/^retry: \d+$/gm)).toHaveLength(1);
  });

  it("carries only that run's events to its agent, on replay and live", async () => {
    const first = await pauseNewRun(asAgent);
    const second = await pauseNewRun(asAgent);
    const client = await runStream(first.run.id, agent.key, 0);
    await waitUntil(async () => idsOf(client).length === (await runEvents(first.run.id)).length, {
      what: "the run's history",
    });

    // Live: the other run moves first, then this one; its events must not show up here.
    await decideOverApi(asReviewerA, second.batch.calls[0]);
    await decideOverApi(asReviewerA, first.batch.calls[0], "reject");
    await client.waitFor((m) => m.event === "batch.decided");
    const claim = await asAgent.post(`/runs/${first.run.id}/claim`, { workerId: "worker-1" });
    expect(claim.status).toBe(200);
    await client.waitFor((m) => m.event === "run.claimed");

    expect(idsOf(client)).toEqual(await runEvents(first.run.id));
    expect(client.messages.map((m) => m.event)).toEqual([
      "run.created",
      "batch.created",
      "call.decided",
      "batch.decided",
      "run.claimed",
    ]);
    expect(client.messages.every((m) => m.data.runId === first.run.id)).toBe(true);
    expect(client.raw()).not.toContain(second.run.id);
  });

  it("replays after Last-Event-ID (header or query) without repeating what the client saw", async () => {
    const { run, batch } = await pauseNewRun(asAgent);
    await decideOverApi(asReviewerA, batch.calls[0]);
    const all = await runEvents(run.id);
    expect(all.length).toBeGreaterThanOrEqual(4);

    const viaHeader = await runStream(run.id, agent.key, all[0]);
    const query = await openSse(
      `${server.baseUrl}/api/v1/runs/${run.id}/stream?lastEventId=${all[1]}`,
      { token: agent.key },
    );
    opened.push(query);
    await viaHeader.waitFor((m) => m.id === String(all.at(-1)));
    await query.waitFor((m) => m.id === String(all.at(-1)));
    expect(idsOf(viaHeader)).toEqual(all.slice(1));
    expect(idsOf(query)).toEqual(all.slice(2));

    const bad = await asAgent.get(`/runs/${run.id}/stream`, { "last-event-id": "not-a-number" });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_request");
  });

  it("shows a reviewer only the run's events in their queues, and hides the run from everyone else", async () => {
    // The run's home queue is A (its first batch); a later batch goes to B.
    const { run, batch } = await pauseNewRun(asAgent);
    await decideOverApi(asReviewerA, batch.calls[0]);
    const claim = await asAgent.post(`/runs/${run.id}/claim`, { workerId: "worker-1" });
    const inB = await asAgent.post(`/runs/${run.id}/batches`, {
      calls: [{ toolCallId: "b-1", toolName: "merge_pr", args: { pr: 7 } }],
      queue: queueB.id,
      claimToken: claim.body.claimToken,
    });
    expect(inB.status).toBe(201);

    const forA = await runStream(run.id, reviewerA.token, 0);
    const forB = await runStream(run.id, reviewerB.token, 0);
    await decideOverApi(asReviewerB, inB.body.calls[0]);
    await forB.waitFor((m) => m.event === "batch.decided" && m.data.batchId === inB.body.id);
    await waitUntil(
      async () => idsOf(forA).length === (await runEvents(run.id, [queueA.id])).length,
      {
        what: "queue A's share of the run",
      },
    );

    expect(idsOf(forA)).toEqual(await runEvents(run.id, [queueA.id]));
    expect(idsOf(forB)).toEqual(await runEvents(run.id, [queueB.id]));
    expect(forA.raw()).not.toContain(inB.body.id);
    expect(forB.messages.every((m) => m.data.queueId === queueB.id)).toBe(true);

    for (const [token, who] of [
      [otherAgent.key, "another agent"],
      [(await makeReviewer()).token, "a reviewer of no queue"],
    ] as const) {
      const response = await apiClient(server.baseUrl, token).get(`/runs/${run.id}/stream`);
      expect(response.status, who).toBe(404);
      expect(response.body.error.code).toBe("not_found");
    }
    expect((await asAgent.get(`/runs/no-such-run/stream`)).status).toBe(404);
    expect((await apiClient(server.baseUrl).get(`/runs/${run.id}/stream`)).status).toBe(401);
  });
});
