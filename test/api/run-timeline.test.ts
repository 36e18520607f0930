import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "@/lib/auth/actor";
import { runTimeline } from "@/lib/runs/run-timeline";
import { startApiServer } from "../support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import type { TestServer } from "../support/server";
import { sessionCookie } from "@/test/support/sessions";
import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys } from "@/db/schema";

// The run timeline: runs are made and moved over real HTTP (agent keys, reviewer tokens) against
// a real `next start`; the timeline verb reads the same database file in this process, and the
// run page that shows it is fetched over HTTP with a session cookie.

let server: TestServer;
let queueA: { id: string; name: string };
let queueB: { id: string; name: string };
let dana: TestReviewer;
let olga: TestReviewer;
let nina: TestReviewer;
let agentKey: { id: string; key: string; name: string };
let agent: ApiClient;
let asDana: ApiClient;
let asOlga: ApiClient;

const reviewer = (r: TestReviewer): Actor => ({
  kind: "reviewer",
  id: r.id,
  name: r.name,
  email: r.email,
});
let agentActor: Actor;

// A checkpoint with a two-byte character: its size is in bytes, not characters.
const CHECKPOINT = { messages: ["secret-checkpoint-marker", "é".repeat(100)] };
const CHECKPOINT_BYTES = Buffer.byteLength(JSON.stringify(CHECKPOINT));

let finished: { runId: string; batchId: string; callId: string };

beforeAll(async () => {
  server = await startApiServer("run-timeline");
  queueA = await makeQueue();
  queueB = await makeQueue();
  dana = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queueA.name }] });
  olga = await makeReviewer({ name: "Olga Other", queues: [{ name: queueB.name }] });
  nina = await makeReviewer({ name: "Nina Nobody" });
  const key = await makeAgentKey({ name: "Support bot", queues: [queueA.name, queueB.name] });
  agentKey = { ...key, name: "Support bot" };
  agentActor = {
    kind: "agent",
    id: key.id,
    name: "Support bot",
    defaultQueueId: queueA.id,
    queueIds: [queueA.id, queueB.id],
    ownerUserId: null,
    mode: "ask",
  };
  agent = apiClient(server.baseUrl, key.key);
  asDana = apiClient(server.baseUrl, dana.token);
  asOlga = apiClient(server.baseUrl, olga.token);

  // pause → decide → claim → tool.completed → complete, all over the API
  const created = await agent.post("/runs", {
    externalId: "ticket-4411",
    batch: refundBatch({ checkpoint: CHECKPOINT }),
  });
  expect(created.status).toBe(201);
  const run = created.body;
  const call = run.batches[0].calls[0];
  const decided = await asDana.post(`/calls/${call.id}/decision`, {
    outcome: "approve",
    expectedRevision: 1,
    reason: "Within policy",
  });
  expect(decided.status).toBe(200);
  const claim = await agent.post(`/runs/${run.id}/claim`, { workerId: "worker-1" });
  expect(claim.status).toBe(200);
  const reported = await agent.post(`/runs/${run.id}/events`, {
    claimToken: claim.body.claimToken,
    type: "tool.completed",
    toolCallId: call.toolCallId,
    result: { refundId: "re_123" },
  });
  expect(reported.status).toBe(201);
  const completed = await agent.post(`/runs/${run.id}/complete`, {
    claimToken: claim.body.claimToken,
    outcome: "completed",
    result: { ok: true },
  });
  expect(completed.status).toBe(200);
  finished = { runId: run.id, batchId: run.batches[0].id, callId: call.id };
}, 60_000);
afterAll(() => server?.stop());

describe("runTimeline", () => {
  it("tells the run's story in log order: pause, decision, claim, tool result, completion", async () => {
    const timeline = await runTimeline(reviewer(dana), finished.runId);
    expect(timeline.events.map((e) => e.type)).toEqual([
      "run.created",
      "batch.created",
      "call.decided",
      "batch.decided",
      "run.claimed",
      "tool.completed",
      "run.completed",
    ]);
    const seqs = timeline.events.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
    const byType = Object.fromEntries(timeline.events.map((e) => [e.type, e]));
    expect(byType["call.decided"]).toMatchObject({
      callId: finished.callId,
      batchId: finished.batchId,
      actor: { kind: "reviewer", id: dana.id, name: "Dana Reviewer" },
      data: { outcome: "approved", source: "reviewer", reason: "Within policy" },
    });
    expect(byType["run.claimed"]).toMatchObject({
      actor: { kind: "agent", name: "Support bot" },
      data: { workerId: "worker-1" },
    });
    expect(byType["tool.completed"]!.data).toMatchObject({ result: { refundId: "re_123" } });
    expect(byType["run.completed"]!.data).toEqual({ result: { ok: true } });
    for (const event of timeline.events) expect(event.at).toMatch(/Z$/);
    // the batch snapshots in batch.* events are left out: the batches are in run.batches
    expect(byType["batch.created"]!.data).not.toHaveProperty("batch");
    expect(byType["batch.decided"]!.data).toEqual({ outcome: "approved" });
    expect(timeline.nextCursor).toBeNull();
  });

  it("says who claimed the run last and how the claim ended, though the run row forgot the worker", async () => {
    const timeline = await runTimeline(reviewer(dana), finished.runId);
    expect(timeline.run.claim).toBeNull();
    const completedAt = timeline.events.find((e) => e.type === "run.completed")!.at;
    expect(timeline.lastClaim).toEqual({
      workerId: "worker-1",
      claimedAt: timeline.events.find((e) => e.type === "run.claimed")!.at,
      ended: { how: "completed", at: completedAt },
    });
  });

  it("carries the run with its batches and who decided, and the checkpoint's size, never its content", async () => {
    const timeline = await runTimeline(reviewer(dana), finished.runId);
    expect(timeline.run).toMatchObject({
      id: finished.runId,
      externalId: "ticket-4411",
      status: "completed",
      agent: { id: agentKey.id, name: "Support bot" },
      rollbackRequestedAt: null,
    });
    expect(timeline.run.batches).toHaveLength(1);
    expect(timeline.run.batches![0]!.calls[0]!.decision).toMatchObject({
      outcome: "approved",
      by: { id: dana.id, name: "Dana Reviewer" },
      reason: "Within policy",
    });
    expect(timeline.checkpointBytes).toBe(CHECKPOINT_BYTES);
    expect(JSON.stringify(timeline)).not.toContain("secret-checkpoint-marker");

    const bare = await agent.post("/runs", {});
    expect((await runTimeline(agentActor, bare.body.id)).checkpointBytes).toBeNull();
  });

  it("shows its agent everything, and nobody else's agent anything", async () => {
    const own = await runTimeline(agentActor, finished.runId);
    expect(own.events).toHaveLength(7);
    const stranger = await makeAgentKey({ name: "Stranger", queues: [queueA.name] });
    await expect(
      runTimeline(
        {
          kind: "agent",
          id: stranger.id,
          name: "Stranger",
          defaultQueueId: queueA.id,
          queueIds: [queueA.id],
          ownerUserId: null,
          mode: "ask",
        },
        finished.runId,
      ),
    ).rejects.toMatchObject({ code: "not_found", status: 404 });
  });

  it("shows a reviewer the run-level events and only their own queues' batches", async () => {
    // The run's first pause goes to A (its home queue), the second to B.
    const created = await agent.post("/runs", { batch: refundBatch() });
    const runId = created.body.id;
    const first = created.body.batches[0];
    await asDana.post(`/calls/${first.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    const claim = await agent.post(`/runs/${runId}/claim`, { workerId: "worker-2" });
    const second = await agent.post(`/runs/${runId}/batches`, {
      ...refundBatch({ queue: queueB.name }),
      claimToken: claim.body.claimToken,
    });
    expect(second.status).toBe(201);
    await asOlga.post(`/calls/${second.body.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
      reason: "Not today",
    });

    const forOlga = await runTimeline(reviewer(olga), runId);
    expect(forOlga.run.batches!.map((b) => b.id)).toEqual([second.body.id]);
    // run-level events carry the home queue (A), yet Olga sees them: she can see the run
    expect(forOlga.events.map((e) => e.type)).toEqual([
      "run.created",
      "run.claimed",
      "batch.created",
      "call.decided",
      "batch.decided",
    ]);
    for (const event of forOlga.events)
      expect(event.batchId ?? second.body.id).toBe(second.body.id);

    const forDana = await runTimeline(reviewer(dana), runId);
    expect(forDana.run.batches!.map((b) => b.id)).toEqual([first.id]);
    expect(forDana.events.map((e) => e.type)).toEqual([
      "run.created",
      "batch.created",
      "call.decided",
      "batch.decided",
      "run.claimed",
    ]);
    for (const event of forDana.events) expect(event.batchId ?? first.id).toBe(first.id);

    const forAgent = await runTimeline(agentActor, runId);
    expect(forAgent.events).toHaveLength(8);
  });

  it("is not found for a reviewer outside the run's queues, or a run that does not exist", async () => {
    await expect(runTimeline(reviewer(nina), finished.runId)).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(runTimeline(reviewer(olga), finished.runId)).rejects.toMatchObject({
      code: "not_found",
    });
    await expect(
      runTimeline(reviewer(dana), "0190a0a0-0000-7000-8000-000000000000"),
    ).rejects.toMatchObject({ code: "not_found" });
    await expect(runTimeline(reviewer(dana), "")).rejects.toMatchObject({
      code: "invalid_request",
    });
    await expect(runTimeline(reviewer(dana), "x".repeat(500))).rejects.toMatchObject({
      code: "invalid_request",
    });
  });

  it("pages: at most `limit` events, then a cursor to the rest", async () => {
    const all = await runTimeline(reviewer(dana), finished.runId);
    const first = await runTimeline(reviewer(dana), finished.runId, { limit: 3 });
    expect(first.events.map((e) => e.seq)).toEqual(all.events.slice(0, 3).map((e) => e.seq));
    expect(first.nextCursor).toBe(String(all.events[2]!.seq));
    const rest = await runTimeline(reviewer(dana), finished.runId, { cursor: first.nextCursor });
    expect(rest.events.map((e) => e.seq)).toEqual(all.events.slice(3).map((e) => e.seq));
    expect(rest.nextCursor).toBeNull();
    await expect(
      runTimeline(reviewer(dana), finished.runId, { limit: 1001 }),
    ).rejects.toMatchObject({ code: "invalid_request" });
    await expect(
      runTimeline(reviewer(dana), finished.runId, { cursor: "abc" }),
    ).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("records a rollback request on the timeline", async () => {
    const run = await agent.post("/runs", { batch: refundBatch() });
    const asked = await asDana.post(`/runs/${run.body.id}/rollback`, { reason: "Wrong customer" });
    expect(asked.status).toBe(202);
    const timeline = await runTimeline(reviewer(dana), run.body.id);
    expect(timeline.run.rollbackRequestedAt).not.toBeNull();
    expect(timeline.events.at(-1)).toMatchObject({
      type: "rollback.requested",
      actor: { kind: "reviewer", name: "Dana Reviewer" },
      data: { reason: "Wrong customer" },
    });
  });
});

describe("who can perform a rollback", () => {
  it("a finished run no worker ever claimed: the timeline says so, a reviewer's request is 409, the agent's own is taken", async () => {
    const run = await agent.post("/runs", { externalId: "one-shot" });
    // a run that never paused is held by its creator, which finishes it without a claim
    const done = await agent.post(`/runs/${run.body.id}/complete`, { outcome: "completed" });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const timeline = await runTimeline(reviewer(dana), run.body.id);
    expect(timeline.rollback).toEqual({
      available: false,
      reason: expect.stringMatching(/^No worker can roll this back: no worker ever claimed/),
    });
    const asked = await asDana.post(`/runs/${run.body.id}/rollback`, { reason: "undo" });
    expect(asked.status).toBe(409);
    expect(asked.body.error).toMatchObject({
      code: "run_terminal",
      message: expect.stringMatching(/^No worker can roll this back/),
      current: { id: run.body.id, status: "completed", rollbackRequestedAt: null },
    });
    expect((await agent.post(`/runs/${run.body.id}/rollback`, {})).status).toBe(202);
  });

  it("a claimed run is offered until its agent key is revoked", async () => {
    const key = await makeAgentKey({ name: "Short-lived bot", queues: [queueA.name] });
    const own = apiClient(server.baseUrl, key.key);
    const run = await own.post("/runs", { batch: refundBatch() });
    const call = run.body.batches[0].calls[0];
    await asDana.post(`/calls/${call.id}/decision`, {
      outcome: "approve",
      expectedRevision: call.revision,
    });
    const claim = await own.post(`/runs/${run.body.id}/claim`, { workerId: "w1" });
    await own.post(`/runs/${run.body.id}/complete`, {
      claimToken: claim.body.claimToken,
      outcome: "completed",
    });
    expect((await runTimeline(reviewer(dana), run.body.id)).rollback).toEqual({ available: true });

    await getDb().update(agentKeys).set({ revokedAt: Date.now() }).where(eq(agentKeys.id, key.id));
    const after = await runTimeline(reviewer(dana), run.body.id);
    expect(after.rollback).toMatchObject({
      available: false,
      reason: expect.stringContaining("the agent key “Short-lived bot” was revoked"),
    });
    const asked = await asDana.post(`/runs/${run.body.id}/rollback`, {});
    expect(asked.status).toBe(409);
    expect(asked.body.error.code).toBe("run_terminal");
  });
});

describe("the run page", () => {
  const sessionOf = (r: TestReviewer) => sessionCookie(server.baseUrl, r.email);

  it("renders the timeline for a reviewer of the run's queue, without the checkpoint", async () => {
    const page = await fetch(`${server.baseUrl}/runs/${finished.runId}`, {
      headers: { cookie: await sessionOf(dana) },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("ticket-4411");
    expect(html).toContain("Run completed");
    expect(html).toMatch(/Claimed by worker <code[^>]*>worker-1<\/code>/);
    expect(html).toContain("Approved by Dana Reviewer");
    expect(html.match(/data-testid="timeline-event"/g)).toHaveLength(7);
    expect(html).not.toContain("secret-checkpoint-marker");
  });

  it("is the not-found page for a reviewer who may not see the run, telling nothing of it", async () => {
    const page = await fetch(`${server.baseUrl}/runs/${finished.runId}`, {
      headers: { cookie: await sessionOf(nina) },
    });
    // The page streams behind its loading state, so the status line (200) is sent before the
    // lookup fails; Next marks the not-found answer noindex instead.
    const html = await page.text();
    expect(html).toContain("Run not found");
    expect(html).toMatch(/<meta name="robots" content="noindex"/);
    expect(html).not.toContain("ticket-4411");
    expect(html).not.toContain("Support bot");
  });

  it("sends a visitor without a session to sign in", async () => {
    const page = await fetch(`${server.baseUrl}/runs/${finished.runId}`, { redirect: "manual" });
    expect([302, 303, 307, 308]).toContain(page.status);
    expect(page.headers.get("location")).toMatch(/\/sign-in/);
  });
});
