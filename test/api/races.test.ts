import { and, count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, runs } from "@/db/schema";
import { approveBatch, makeReviewers, pausedRun, startApiServer } from "../support/api-fixtures";
import { makeAgentKey, makeQueue } from "../support/factories";
import { apiClient, refundBatch, type ApiClient, type ApiResponse } from "../support/http";
import type { TestServer } from "../support/server";

// Real concurrency over HTTP: many callers at once, exactly one winner, everyone else told who won.

let server: TestServer;
let agent: ApiClient;
let agentId: string;
let reviewers: { id: string; client: ApiClient }[];

beforeAll(async () => {
  server = await startApiServer("races");
  const queue = await makeQueue();
  const made = await makeReviewers(50, queue.name);
  reviewers = made.map((r) => ({ id: r.id, client: apiClient(server.baseUrl, r.token) }));
  const key = await makeAgentKey({ queues: [queue.name] });
  agent = apiClient(server.baseUrl, key.key);
  agentId = key.id;
});
afterAll(() => server?.stop());

function tally(answers: ApiResponse[]) {
  const byStatus = new Map<number, number>();
  for (const a of answers) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
  return Object.fromEntries(byStatus);
}

async function eventCount(type: string, column: "callId" | "batchId" | "runId", id: string) {
  const [row] = await getDb()
    .select({ n: count() })
    .from(events)
    .where(and(eq(events.type, type), eq(events[column], id)));
  return row!.n;
}

describe("deciding one call", () => {
  it("quorum 2, three reviewers approving at once: approved exactly at the second, the third told already_decided — over 10 calls", async () => {
    const quorumQueue = await makeQueue({ requiredApprovals: 2 });
    const trio = (await makeReviewers(3, quorumQueue.name)).map((r) => ({
      id: r.id,
      client: apiClient(server.baseUrl, r.token),
    }));
    const quorumAgent = apiClient(
      server.baseUrl,
      (await makeAgentKey({ queues: [quorumQueue.name] })).key,
    );
    for (let round = 0; round < 10; round++) {
      const { batch } = await pausedRun(quorumAgent, refundBatch());
      const callId = batch.calls[0].id;
      const answers = await Promise.all(
        trio.map((r) =>
          r.client.post(`/calls/${callId}/decision`, { outcome: "approve", expectedRevision: 1 }),
        ),
      );
      expect(tally(answers)).toEqual({ 200: 2, 409: 1 });
      const loser = answers.find((a) => a.status === 409)!;
      expect(loser.body.error.code).toBe("already_decided");
      // One 200 saw the vote counted and the call still pending, the other closed the quorum.
      const statuses = answers.filter((a) => a.status === 200).map((a) => a.body.call.status);
      expect(statuses.sort()).toEqual(["approved", "pending"]);
      const now = (await quorumAgent.get(`/batches/${batch.id}`)).body;
      expect(now.calls[0].status).toBe("approved");
      expect(now.calls[0].votes).toHaveLength(2);
      const closer = answers.find((a) => a.body.call?.status === "approved")!;
      expect(now.calls[0].decision.by.id).toBe(closer.body.call.decision.by.id);
      expect(await eventCount("call.voted", "callId", callId)).toBe(1);
      expect(await eventCount("call.decided", "callId", callId)).toBe(1);
    }
  });

  it("50 reviewers at once: one 200, 49 × 409 already_decided naming the winner — over 10 calls", async () => {
    const paused = await Promise.all(
      Array.from({ length: 10 }, () => pausedRun(agent, refundBatch())),
    );
    for (const { batch } of paused) {
      const callId = batch.calls[0].id;
      const outcomes = reviewers.map((_, i) => (i % 3 === 0 ? "reject" : "approve"));
      const answers = await Promise.all(
        reviewers.map((r, i) =>
          r.client.post(`/calls/${callId}/decision`, { outcome: outcomes[i], expectedRevision: 1 }),
        ),
      );
      expect(tally(answers)).toEqual({ 200: 1, 409: 49 });
      const winnerIndex = answers.findIndex((a) => a.status === 200);
      const winner = reviewers[winnerIndex]!;
      const winningOutcome = outcomes[winnerIndex] === "approve" ? "approved" : "rejected";
      expect(answers[winnerIndex]!.body.call.decision).toMatchObject({
        outcome: winningOutcome,
        by: { id: winner.id },
      });
      for (const loser of answers.filter((a) => a.status === 409)) {
        expect(loser.body.error.code).toBe("already_decided");
        expect(loser.body.error.current.id).toBe(callId);
        expect(loser.body.error.current.decision).toMatchObject({
          outcome: winningOutcome,
          by: { id: winner.id },
        });
      }
      // one decision, one vote, one event: the losers wrote nothing
      const now = (await agent.get(`/batches/${batch.id}`)).body;
      expect(now.status).toBe("decided");
      expect(now.calls[0].votes).toHaveLength(1);
      expect(now.calls[0].votes[0].reviewer.id).toBe(winner.id);
      expect(await eventCount("call.decided", "callId", callId)).toBe(1);
      expect(await eventCount("batch.decided", "batchId", batch.id)).toBe(1);
    }
  }, 120_000); // 500 concurrent decisions: slow on a loaded 2-core machine, never wrong

  it("20 reviewers deciding a whole batch at once: one 200, the rest 409, every call decided by the winner", async () => {
    const { batch } = await pausedRun(agent, {
      calls: Array.from({ length: 3 }, (_, i) => ({
        toolCallId: `c${i}`,
        toolName: "refund_order",
        args: { orderId: `B-${i}` },
      })),
    });
    const expectedRevisions = Object.fromEntries(batch.calls.map((c: { id: string }) => [c.id, 1]));
    const racers = reviewers.slice(0, 20);
    const answers = await Promise.all(
      racers.map((r) =>
        r.client.post(`/batches/${batch.id}/decision`, { outcome: "approve", expectedRevisions }),
      ),
    );
    expect(tally(answers)).toEqual({ 200: 1, 409: 19 });
    const winner = racers[answers.findIndex((a) => a.status === 200)]!;
    for (const loser of answers.filter((a) => a.status === 409)) {
      expect(loser.body.error.code).toBe("already_decided");
      expect(loser.body.error.current.status).toBe("decided");
    }
    const now = (await agent.get(`/batches/${batch.id}`)).body;
    for (const call of now.calls) {
      expect(call.decision.by.id).toBe(winner.id);
      expect(call.votes).toHaveLength(1);
    }
  });

  it("an agent cancelling while 20 reviewers decide: exactly one of them all succeeds", async () => {
    for (let round = 0; round < 3; round++) {
      const { batch } = await pausedRun(agent, refundBatch());
      const callId = batch.calls[0].id;
      const racers = reviewers.slice(round * 10, round * 10 + 20);
      const [cancel, ...decisions] = await Promise.all([
        agent.post(`/batches/${batch.id}/cancel`, {}),
        ...racers.map((r) =>
          r.client.post(`/calls/${callId}/decision`, { outcome: "approve", expectedRevision: 1 }),
        ),
      ]);
      const successes = [cancel!, ...decisions].filter((a) => a.status === 200);
      expect(successes).toHaveLength(1);
      const now = (await agent.get(`/batches/${batch.id}`)).body;
      if (cancel!.status === 200) {
        expect(now.status).toBe("cancelled");
        for (const d of decisions) expect(d.body.error.code).toBe("not_pending");
      } else {
        expect(cancel!.body.error.code).toBe("not_pending");
        expect(now.status).toBe("decided");
        for (const d of decisions.filter((a) => a.status === 409))
          expect(d.body.error.code).toBe("already_decided");
      }
    }
  });
});

describe("claiming one run", () => {
  it("20 workers at once: one 200, 19 × 409 already_claimed naming the holder — over 5 runs", async () => {
    const reviewer = reviewers[0]!.client;
    for (let round = 0; round < 5; round++) {
      const { run, batch } = await pausedRun(agent, refundBatch());
      await approveBatch(reviewer, batch);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          agent.post(`/runs/${run.id}/claim`, { workerId: `worker-${i}` }),
        ),
      );
      expect(tally(answers)).toEqual({ 200: 1, 409: 19 });
      const winner = answers.find((a) => a.status === 200)!;
      const holder = winner.body.run.claim.workerId;
      for (const loser of answers.filter((a) => a.status === 409)) {
        expect(loser.body.error.code).toBe("already_claimed");
        expect(loser.body.error.holder).toBe(holder);
        expect(loser.body.error.leaseExpiresAt).toBe(winner.body.leaseExpiresAt);
      }
      expect(await eventCount("run.claimed", "runId", run.id)).toBe(1);
      // and only the winner's token works
      const beats = await Promise.all(
        answers.map((a) =>
          a.status === 200
            ? agent.post(`/runs/${run.id}/heartbeat`, { claimToken: a.body.claimToken })
            : null,
        ),
      );
      expect(beats.filter((b) => b?.status === 200)).toHaveLength(1);
    }
  });
});

describe("Idempotency-Key under concurrent retries", () => {
  it("20 parallel POST /runs with one key create exactly one run", async () => {
    const key = `retry-${Math.random()}`;
    const body = { externalId: "once", batch: refundBatch() };
    const countRuns = async () =>
      (await getDb().select({ n: count() }).from(runs).where(eq(runs.agentKeyId, agentId)))[0]!.n;
    const before = await countRuns();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => agent.post("/runs", body, { "idempotency-key": key })),
    );
    expect(tally(answers)).toEqual({ 201: 1, 200: 19 });
    const ids = new Set(answers.map((a) => a.body.id));
    expect(ids.size).toBe(1);
    expect(new Set(answers.map((a) => a.body.batches[0].id)).size).toBe(1);
    expect(await countRuns()).toBe(before + 1);
  });

  it("20 parallel POST /runs/{id}/batches with one key create exactly one batch", async () => {
    const run = (await agent.post("/runs", {})).body;
    const key = `retry-${Math.random()}`;
    const body = refundBatch();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        agent.post(`/runs/${run.id}/batches`, body, { "idempotency-key": key }),
      ),
    );
    expect(tally(answers)).toEqual({ 201: 1, 200: 19 });
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect((await agent.get(`/runs/${run.id}`)).body.batches).toHaveLength(1);
  });

  it("20 parallel POST /runs without a key create 20 runs (the key is what dedupes)", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, () => agent.post("/runs", {})));
    expect(tally(answers)).toEqual({ 201: 20 });
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(20);
  });
});
