import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  approveBatch,
  makeQuickTeam,
  makeReviewers,
  pausedRun,
  rowsOf,
  startApiServer,
  writeSnapshot,
} from "../support/api-fixtures";
import { makeAgentKey, makeQueue } from "../support/factories";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import type { TestServer } from "../support/server";

// POST /runs, GET /runs/{id}, POST /runs/{id}/batches, and Idempotency-Key on both creates.

let server: TestServer;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;
let agent: ApiClient;
let reviewer: ApiClient;

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

beforeAll(async () => {
  server = await startApiServer("runs");
  // Its queue lets agents ask for "approve" on timeout (one test does).
  team = await makeQuickTeam({ approveOnTimeout: true, approveOnTimeoutMinSecs: 60 });
  agent = apiClient(server.baseUrl, team.agent.key);
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
});
afterAll(() => server?.stop());

describe("POST /runs", () => {
  it("starts a running run for the calling agent", async () => {
    const answer = await agent.post("/runs", {
      externalId: "ext-1",
      conversationId: "conv-1",
      metadata: { ticket: 42 },
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      agent: { id: team.agent.id, name: "Support bot" },
      externalId: "ext-1",
      conversationId: "conv-1",
      status: "running",
      metadata: { ticket: 42 },
    });
    expect(answer.body.id).toEqual(expect.any(String));
    expect(answer.body.createdAt).toMatch(ISO);
    expect(answer.body.updatedAt).toMatch(ISO);
    expect(answer.body.batches).toBeUndefined();
  });

  it("accepts an empty body (every field is optional)", async () => {
    const answer = await agent.raw("/runs", { method: "POST" });
    expect(answer.status).toBe(201);
    expect((await answer.json()).status).toBe("running");
  });

  it("creates the run and its first pause in one call", async () => {
    const before = Date.now();
    const answer = await agent.post("/runs", { batch: refundBatch({ checkpoint: { step: 3 } }) });
    expect(answer.status).toBe(201);
    const run = answer.body;
    expect(run.status).toBe("waiting_approval");
    expect(run.batches).toHaveLength(1);
    const batch = run.batches[0];
    expect(batch).toMatchObject({
      runId: run.id,
      kind: "action",
      status: "pending",
      outcome: null,
      queue: { id: team.queue.id, name: team.queue.name },
      plan: null,
      onTimeout: "reject",
      decidedAt: null,
    });
    expect(batch.reviewUrl).toBe(`${server.baseUrl}/batches/${batch.id}`);
    // the queue's default timeout (an hour) when the request names none
    const expiresIn = Date.parse(batch.expiresAt) - Date.parse(batch.createdAt);
    expect(expiresIn).toBe(3600 * 1000);
    expect(Date.parse(batch.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(batch.calls).toHaveLength(1);
    expect(batch.calls[0]).toMatchObject({
      batchId: batch.id,
      toolName: "refund_order",
      args: { orderId: "A-1001", amount: 25 },
      inputSchema: null,
      summary: "Refund order A-1001",
      risks: ["Money leaves the company"],
      costEstimate: 25,
      metadata: null,
      status: "pending",
      revision: 1,
      requiredApprovals: 1,
      votes: [],
      decision: null,
    });
    expect(batch.calls[0].actionHash).toMatch(/^[0-9a-f]{64}$/);
    // the checkpoint goes only to a claimer
    expect(JSON.stringify(run)).not.toContain("checkpoint");
  });

  it("sends the batch to another queue the key may target, by name or by id", async () => {
    const other = await makeQueue();
    const main = await makeQueue();
    const key = await makeAgentKey({ queues: [main.name, other.name] });
    const client = apiClient(server.baseUrl, key.key);
    const byName = await client.post("/runs", { batch: refundBatch({ queue: other.name }) });
    expect(byName.status).toBe(201);
    expect(byName.body.batches[0].queue).toEqual({ id: other.id, name: other.name });
    const byId = await client.post("/runs", { batch: refundBatch({ queue: other.id }) });
    expect(byId.status).toBe(201);
    expect(byId.body.batches[0].queue.id).toBe(other.id);
    const byDefault = await client.post("/runs", { batch: refundBatch() });
    expect(byDefault.body.batches[0].queue.id).toBe(main.id);
  });

  it("pauses on a plan: kind plan carries the plan and one call to decide", async () => {
    const plan = {
      summary: "Migrate the billing table",
      risks: ["downtime"],
      resources: ["db/billing"],
      rollback: "restore snapshot",
    };
    const answer = await agent.post("/runs", { batch: { kind: "plan", plan } });
    expect(answer.status).toBe(201);
    const batch = answer.body.batches[0];
    expect(batch.kind).toBe("plan");
    expect(batch.plan).toEqual(plan);
    expect(batch.calls).toHaveLength(1);
    expect(batch.calls[0].status).toBe("pending");
  });

  it("is 404 for a queue the key may not target, just as for one that does not exist, and writes nothing", async () => {
    const foreign = await makeQueue();
    const before = await writeSnapshot();
    const forbidden = await agent.post("/runs", { batch: refundBatch({ queue: foreign.name }) });
    expect(forbidden.status).toBe(404);
    expect(forbidden.body.error.code).toBe("not_found");
    const missing = await agent.post("/runs", { batch: refundBatch({ queue: "no-such-queue" }) });
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe("not_found");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("rejects an invalid batch with every issue listed, and writes nothing", async () => {
    const before = await writeSnapshot();
    const answer = await agent.post("/runs", {
      metadata: "not an object",
      batch: { calls: [{ toolCallId: "a", toolName: "", args: [] }] },
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    const paths = answer.body.error.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["metadata", "batch.calls.0.toolName", "batch.calls.0.args"]),
    );
    for (const issue of answer.body.error.issues) expect(issue.message).toEqual(expect.any(String));
    expect(await writeSnapshot()).toEqual(before);
  });

  it("refuses an action batch without calls, a plan batch without a plan, and a bad callbackUrl or inputSchema", async () => {
    const before = await writeSnapshot();
    const cases: [unknown, string][] = [
      [{ calls: [] }, "batch.calls"],
      [{ kind: "plan" }, "batch.plan"],
      [refundBatch({ callbackUrl: "ftp://example.com/hook" }), "batch.callbackUrl"],
      [refundBatch({ timeoutSecs: 0 }), "batch.timeoutSecs"],
      [
        {
          calls: [
            { toolCallId: "a", toolName: "x", args: {} },
            { toolCallId: "a", toolName: "y", args: {} },
          ],
        },
        "batch.calls.1.toolCallId",
      ],
      [
        {
          calls: [
            { toolCallId: "c", toolName: "t", args: {}, inputSchema: { type: "no-such-type" } },
          ],
        },
        "batch.calls.0.inputSchema",
      ],
    ];
    for (const [batch, path] of cases) {
      const answer = await agent.post("/runs", { batch });
      expect(answer.status, JSON.stringify(batch)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("GET /runs/{runId}", () => {
  it("answers the run with its batches to its agent and to reviewers of its queue", async () => {
    const { run, batch } = await pausedRun(
      agent,
      refundBatch({ checkpoint: { secret: "for the claimer" } }),
    );
    const mine = await agent.get(`/runs/${run.id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({ id: run.id, status: "waiting_approval" });
    expect(mine.body.batches.map((b: { id: string }) => b.id)).toEqual([batch.id]);
    expect(JSON.stringify(mine.body)).not.toContain("for the claimer");

    const seen = await reviewer.get(`/runs/${run.id}`);
    expect(seen.status).toBe(200);
    expect(seen.body.id).toBe(run.id);
  });

  it("is 404 for unknown ids, for another agent's run, and for a reviewer outside the run's queues", async () => {
    const { run } = await pausedRun(agent, refundBatch());
    const unknown = await agent.get("/runs/00000000-0000-7000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");

    const otherTeam = await makeQuickTeam();
    const otherAgent = await apiClient(server.baseUrl, otherTeam.agent.key).get(`/runs/${run.id}`);
    expect(otherAgent.status).toBe(404);
    expect(otherAgent.body.error.code).toBe("not_found");
    const otherReviewer = await apiClient(server.baseUrl, otherTeam.reviewer.token).get(
      `/runs/${run.id}`,
    );
    expect(otherReviewer.status).toBe(404);
    // "exists but not yours" and "does not exist" must look the same
    expect(otherAgent.body.error.message).toBe(unknown.body.error.message);
  });
});

describe("POST /runs/{runId}/batches", () => {
  it("pauses a running run: 201 Batch, the run waits for approval", async () => {
    const run = (await agent.post("/runs", {})).body;
    const answer = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ timeoutSecs: 120, onTimeout: "approve" }),
    );
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ runId: run.id, status: "pending", onTimeout: "approve" });
    expect(Date.parse(answer.body.expiresAt) - Date.parse(answer.body.createdAt)).toBe(120_000);
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("waiting_approval");
  });

  it("is 409 not_ready while the run already waits for a decision, and writes nothing", async () => {
    const { run } = await pausedRun(agent, refundBatch());
    const before = await writeSnapshot();
    const answer = await agent.post(`/runs/${run.id}/batches`, refundBatch());
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("not_ready");
    expect(answer.body.error.current).toMatchObject({ id: run.id, status: "waiting_approval" });
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 409 not_ready for a ready run that nobody claimed", async () => {
    const { run, batch } = await pausedRun(agent, refundBatch());
    await approveBatch(reviewer, batch);
    const answer = await agent.post(`/runs/${run.id}/batches`, refundBatch());
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("not_ready");
    expect(answer.body.error.current.status).toBe("ready");
  });

  it("takes a new pause from the claim holder; the claim ends and the run waits again", async () => {
    const { run, batch } = await pausedRun(agent, refundBatch());
    await approveBatch(reviewer, batch);
    const claim = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w1" })).body;

    const withoutToken = await agent.post(`/runs/${run.id}/batches`, refundBatch());
    expect(withoutToken.status).toBe(409);
    expect(withoutToken.body.error.code).toBe("already_claimed");
    expect(withoutToken.body.error.current.status).toBe("resuming");

    const wrongToken = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ claimToken: "cs_claim_not-the-token" }),
    );
    expect(wrongToken.status).toBe(409);
    expect(wrongToken.body.error.code).toBe("claim_lost");

    const next = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ claimToken: claim.claimToken, checkpoint: { step: 2 } }),
    );
    expect(next.status).toBe(201);
    const after = (await agent.get(`/runs/${run.id}`)).body;
    expect(after.status).toBe("waiting_approval");
    expect(after.claim).toBeNull();
    expect(after.batches.map((b: { id: string }) => b.id)).toEqual([batch.id, next.body.id]);

    // the claim ended with the pause
    const beat = await agent.post(`/runs/${run.id}/heartbeat`, { claimToken: claim.claimToken });
    expect(beat.status).toBe(409);
    expect(beat.body.error.code).toBe("claim_lost");

    // the new checkpoint is what the next claimer resumes from, with the new batch
    await approveBatch(reviewer, next.body);
    const resumed = await agent.post(`/runs/${run.id}/claim`, { workerId: "w2" });
    expect(resumed.body.checkpoint).toEqual({ step: 2 });
    expect(resumed.body.batch.id).toBe(next.body.id);
  });

  it("is 409 run_terminal once the run completed", async () => {
    const { run, batch } = await pausedRun(agent, refundBatch());
    await approveBatch(reviewer, batch);
    const claim = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w1" })).body;
    expect(
      (
        await agent.post(`/runs/${run.id}/complete`, {
          claimToken: claim.claimToken,
          outcome: "completed",
        })
      ).status,
    ).toBe(200);
    const before = await writeSnapshot();
    const answer = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ claimToken: claim.claimToken }),
    );
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("run_terminal");
    expect(answer.body.error.current.status).toBe("completed");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 404 on another agent's run and for a queue the key may not target, writing nothing", async () => {
    const run = (await agent.post("/runs", {})).body;
    const otherTeam = await makeQuickTeam();
    const before = await writeSnapshot();
    const notYours = await apiClient(server.baseUrl, otherTeam.agent.key).post(
      `/runs/${run.id}/batches`,
      refundBatch(),
    );
    expect(notYours.status).toBe(404);
    expect(notYours.body.error.code).toBe("not_found");
    const forbidden = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ queue: otherTeam.queue.id }),
    );
    expect(forbidden.status).toBe(404);
    expect(forbidden.body.error.code).toBe("not_found");
    const unknown = await agent.post(
      `/runs/00000000-0000-7000-8000-000000000000/batches`,
      refundBatch(),
    );
    expect(unknown.status).toBe(404);
    expect(await writeSnapshot()).toEqual(before);
    expect((await agent.get(`/runs/${run.id}`)).body).toMatchObject({
      status: "running",
      batches: [],
    });
  });

  it("rejects an invalid batch with issues and leaves the run running", async () => {
    const run = (await agent.post("/runs", {})).body;
    const before = await rowsOf(run.id);
    const answer = await agent.post(`/runs/${run.id}/batches`, {
      calls: [{ toolCallId: "x", toolName: "t", args: {}, risks: "not a list", costEstimate: -1 }],
      onTimeout: "sometimes",
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    expect(answer.body.error.issues.map((i: { path: string }) => i.path)).toEqual(
      expect.arrayContaining(["calls.0.risks", "calls.0.costEstimate", "onTimeout"]),
    );
    expect(await rowsOf(run.id)).toEqual(before);
  });
});

describe("Idempotency-Key", () => {
  it("answers a repeated POST /runs with the first result: 200, the same ids, nothing new written", async () => {
    const key = `key-${Math.random()}`;
    const body = { externalId: "idem-1", metadata: { a: 1, b: 2 }, batch: refundBatch() };
    const first = await agent.post("/runs", body, { "idempotency-key": key });
    expect(first.status).toBe(201);
    const before = await writeSnapshot();

    const again = await agent.post("/runs", body, { "idempotency-key": key });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.batches.map((b: { id: string }) => b.id)).toEqual(
      first.body.batches.map((b: { id: string }) => b.id),
    );
    expect(again.body.batches[0].calls[0].id).toBe(first.body.batches[0].calls[0].id);

    // the same body with its keys in another order is the same request
    const reordered = { batch: body.batch, metadata: { b: 2, a: 1 }, externalId: "idem-1" };
    const third = await agent.post("/runs", reordered, { "idempotency-key": key });
    expect(third.status).toBe(200);
    expect(third.body.id).toBe(first.body.id);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 409 idempotency_conflict for the same key with another body, with the first run as current", async () => {
    const key = `key-${Math.random()}`;
    const first = await agent.post("/runs", { externalId: "one" }, { "idempotency-key": key });
    expect(first.status).toBe(201);
    const before = await writeSnapshot();
    const other = await agent.post("/runs", { externalId: "two" }, { "idempotency-key": key });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("idempotency_conflict");
    expect(other.body.error.current).toMatchObject({ id: first.body.id, externalId: "one" });
    expect(await writeSnapshot()).toEqual(before);
  });

  it("keeps keys apart per agent", async () => {
    const key = `shared-${Math.random()}`;
    const otherTeam = await makeQuickTeam();
    const mine = await agent.post("/runs", {}, { "idempotency-key": key });
    const theirs = await apiClient(server.baseUrl, otherTeam.agent.key).post(
      "/runs",
      {},
      { "idempotency-key": key },
    );
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.id).not.toBe(mine.body.id);
  });

  it("answers a repeated POST /runs/{id}/batches with the first batch, even though the run now waits", async () => {
    const run = (await agent.post("/runs", {})).body;
    const key = `batch-${Math.random()}`;
    const body = refundBatch();
    const first = await agent.post(`/runs/${run.id}/batches`, body, { "idempotency-key": key });
    expect(first.status).toBe(201);
    const before = await writeSnapshot();
    const again = await agent.post(`/runs/${run.id}/batches`, body, { "idempotency-key": key });
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.calls.map((c: { id: string }) => c.id)).toEqual(
      first.body.calls.map((c: { id: string }) => c.id),
    );

    const conflict = await agent.post(`/runs/${run.id}/batches`, refundBatch(), {
      "idempotency-key": key,
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe("idempotency_conflict");
    expect(conflict.body.error.current.id).toBe(first.body.id);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("refuses a key longer than 255 characters", async () => {
    const before = await writeSnapshot();
    const answer = await agent.post("/runs", {}, { "idempotency-key": "k".repeat(256) });
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe("invalid_request");
    expect(answer.body.error.issues[0].path).toBe("Idempotency-Key");
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("reviewer-only runs", () => {
  it("shows a reviewer only runs with a batch in one of their queues", async () => {
    const secondQueue = await makeQueue();
    const key = await makeAgentKey({ queues: [team.queue.name, secondQueue.name] });
    const client = apiClient(server.baseUrl, key.key);
    const [outsider] = await makeReviewers(1, secondQueue.name);
    const { run } = await pausedRun(client, refundBatch());
    expect((await apiClient(server.baseUrl, outsider!.token).get(`/runs/${run.id}`)).status).toBe(
      404,
    );
    expect((await reviewer.get(`/runs/${run.id}`)).status).toBe(200);
  });
});
