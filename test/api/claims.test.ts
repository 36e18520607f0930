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
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import type { TestServer } from "../support/server";
import { sessionCookie } from "../support/sessions";

// The worker side: POST /runs/{id}/claim, heartbeat, events, complete, rollback, and leases.

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("claims", { SWEEP_INTERVAL_MS: "200" });
});
afterAll(() => server?.stop());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function team() {
  const t = await makeQuickTeam();
  return {
    ...t,
    agent: apiClient(server.baseUrl, t.agent.key),
    reviewer: apiClient(server.baseUrl, t.reviewer.token),
  };
}

/** A run whose batch is approved: ready to be claimed. */
async function readyRun(
  agent: ApiClient,
  reviewer: ApiClient,
  batch: Record<string, unknown> = refundBatch(),
) {
  const paused = await pausedRun(agent, batch);
  const decided = await approveBatch(reviewer, paused.batch);
  return { run: paused.run, batch: decided };
}

async function claimedRun(
  agent: ApiClient,
  reviewer: ApiClient,
  workerId = "worker-1",
  leaseSecs?: number,
) {
  const { run, batch } = await readyRun(agent, reviewer);
  const claim = await agent.post(`/runs/${run.id}/claim`, {
    workerId,
    ...(leaseSecs && { leaseSecs }),
  });
  expect(claim.status).toBe(200);
  return { run, batch, claim: claim.body };
}

describe("POST /runs/{runId}/claim", () => {
  it("hands a ready run to one worker with a token, a lease, the checkpoint and the settled batch", async () => {
    const { agent, reviewer } = await team();
    const { run, batch } = await readyRun(
      agent,
      reviewer,
      refundBatch({ checkpoint: { messages: ["hi"], step: 3 } }),
    );
    const before = Date.now();
    const answer = await agent.post(`/runs/${run.id}/claim`, { workerId: "worker-1" });
    expect(answer.status).toBe(200);
    const claim = answer.body;
    expect(claim.claimToken).toEqual(expect.any(String));
    expect(claim.claimToken.length).toBeGreaterThan(20);
    expect(claim.leaseExpiresAt).toMatch(ISO);
    // the default lease is 60 s
    const lease = Date.parse(claim.leaseExpiresAt) - before;
    expect(lease).toBeGreaterThan(59_000);
    expect(lease).toBeLessThan(62_000);
    expect(claim.run).toMatchObject({
      id: run.id,
      status: "resuming",
      claim: { workerId: "worker-1", leaseExpiresAt: claim.leaseExpiresAt },
    });
    expect(claim.checkpoint).toEqual({ messages: ["hi"], step: 3 });
    expect(claim.batch).toMatchObject({ id: batch.id, status: "decided", outcome: "approved" });
    expect(claim.rollback).toBeNull();

    // the run shows who holds it, never the token or the checkpoint
    const seen = (await agent.get(`/runs/${run.id}`)).body;
    expect(seen.status).toBe("resuming");
    expect(seen.claim.workerId).toBe("worker-1");
    const text = JSON.stringify(seen);
    expect(text).not.toContain(claim.claimToken);
    expect(text).not.toContain("messages");
  });

  it("is 409 already_claimed while another worker holds the run, with the holder and its lease", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer, "worker-1");
    const before = await writeSnapshot();
    const answer = await agent.post(`/runs/${run.id}/claim`, { workerId: "worker-2" });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("already_claimed");
    expect(answer.body.error.holder).toBe("worker-1");
    expect(answer.body.error.leaseExpiresAt).toBe(claim.leaseExpiresAt);
    expect(answer.body.error.current).toMatchObject({ id: run.id, status: "resuming" });
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 409 not_ready while the run waits for a decision or was never paused", async () => {
    const { agent } = await team();
    const { run } = await pausedRun(agent, refundBatch());
    const running = (await agent.post("/runs", {})).body;
    const before = await writeSnapshot();
    for (const [id, status] of [
      [run.id, "waiting_approval"],
      [running.id, "running"],
    ]) {
      const answer = await agent.post(`/runs/${id}/claim`, { workerId: "w" });
      expect(answer.status).toBe(409);
      expect(answer.body.error.code).toBe("not_ready");
      expect(answer.body.error.current).toMatchObject({ id, status });
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 409 run_terminal once the run completed", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "completed",
    });
    const answer = await agent.post(`/runs/${run.id}/claim`, { workerId: "w" });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("run_terminal");
    expect(answer.body.error.current.status).toBe("completed");
  });

  it("refuses bad bodies with issues, reviewers with 403, and other agents' or unknown runs with 404 — writing nothing", async () => {
    const { agent, reviewer } = await team();
    const other = await team();
    const { run } = await readyRun(agent, reviewer);
    const before = await writeSnapshot();
    for (const [body, path] of [
      [{ workerId: "w", leaseSecs: 4 }, "leaseSecs"],
      [{ workerId: "w", leaseSecs: 3601 }, "leaseSecs"],
      [{ workerId: "w", leaseSecs: 10.5 }, "leaseSecs"],
      [{ workerId: "" }, "workerId"],
      [{}, "workerId"],
    ] as const) {
      const answer = await agent.post(`/runs/${run.id}/claim`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    const empty = await agent.raw(`/runs/${run.id}/claim`, { method: "POST" });
    expect(empty.status).toBe(400);
    expect((await empty.json()).error.code).toBe("invalid_request");

    const byReviewer = await reviewer.post(`/runs/${run.id}/claim`, { workerId: "w" });
    expect(byReviewer.status).toBe(403);
    expect(byReviewer.body.error.code).toBe("forbidden");
    const byOther = await other.agent.post(`/runs/${run.id}/claim`, { workerId: "w" });
    expect(byOther.status).toBe(404);
    expect(byOther.body.error.code).toBe("not_found");
    expect(
      (await agent.post(`/runs/00000000-0000-7000-8000-000000000000/claim`, { workerId: "w" }))
        .status,
    ).toBe(404);
    expect(await writeSnapshot()).toEqual(before);
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("ready");
  });
});

describe("POST /runs/{runId}/heartbeat", () => {
  it("extends a live lease (60 s by default, or leaseSecs)", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer, "w", 5);
    const longer = await agent.post(`/runs/${run.id}/heartbeat`, {
      claimToken: claim.claimToken,
      leaseSecs: 600,
    });
    expect(longer.status).toBe(200);
    expect(Object.keys(longer.body)).toEqual(["leaseExpiresAt"]);
    expect(
      Date.parse(longer.body.leaseExpiresAt) - Date.parse(claim.leaseExpiresAt),
    ).toBeGreaterThan(590_000);
    const byDefault = await agent.post(`/runs/${run.id}/heartbeat`, {
      claimToken: claim.claimToken,
    });
    expect(Date.parse(byDefault.body.leaseExpiresAt) - Date.now()).toBeGreaterThan(55_000);
    expect((await agent.get(`/runs/${run.id}`)).body.claim.leaseExpiresAt).toBe(
      byDefault.body.leaseExpiresAt,
    );
  });

  it("is 409 claim_lost for a token that does not hold the run, 400 for a bad body, 403/404 for the wrong caller", async () => {
    const { agent, reviewer } = await team();
    const other = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    const wrong = await agent.post(`/runs/${run.id}/heartbeat`, { claimToken: "cs_claim_guess" });
    expect(wrong.status).toBe(409);
    expect(wrong.body.error.code).toBe("claim_lost");
    expect(wrong.body.error.current).toMatchObject({
      id: run.id,
      status: "resuming",
      claim: { leaseExpiresAt: claim.leaseExpiresAt },
    });
    const bad = await agent.post(`/runs/${run.id}/heartbeat`, {
      claimToken: claim.claimToken,
      leaseSecs: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe("leaseSecs");
    expect((await agent.post(`/runs/${run.id}/heartbeat`, {})).body.error.issues[0].path).toBe(
      "claimToken",
    );
    expect(
      (await reviewer.post(`/runs/${run.id}/heartbeat`, { claimToken: claim.claimToken })).status,
    ).toBe(403);
    expect(
      (await other.agent.post(`/runs/${run.id}/heartbeat`, { claimToken: claim.claimToken }))
        .status,
    ).toBe(404);
    // none of that touched the lease
    expect((await agent.get(`/runs/${run.id}`)).body.claim.leaseExpiresAt).toBe(
      claim.leaseExpiresAt,
    );
  });
});

describe("POST /runs/{runId}/events", () => {
  it("records what a tool did: 201 with the event", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    const completed = await agent.post(`/runs/${run.id}/events`, {
      claimToken: claim.claimToken,
      type: "tool.completed",
      toolCallId: "call-1",
      result: { refundId: "R-9" },
      revert: { tool: "cancel_refund", args: { refundId: "R-9" } },
    });
    expect(completed.status).toBe(201);
    expect(completed.body).toMatchObject({
      type: "tool.completed",
      runId: run.id,
      actor: { kind: "agent", name: "Support bot" },
      data: {
        toolCallId: "call-1",
        result: { refundId: "R-9" },
        revert: { tool: "cancel_refund" },
      },
    });
    expect(completed.body.seq).toEqual(expect.any(Number));
    expect(completed.body.at).toMatch(ISO);
    const failed = await agent.post(`/runs/${run.id}/events`, {
      claimToken: claim.claimToken,
      type: "tool.failed",
      toolCallId: "call-2",
      error: { message: "timeout" },
    });
    expect(failed.status).toBe(201);
    expect(failed.body.seq).toBeGreaterThan(completed.body.seq);
    expect(failed.body.data).toEqual({ toolCallId: "call-2", error: { message: "timeout" } });
  });

  it("is 409 claim_lost without the live token, 400 for bad events — writing nothing", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    const before = await writeSnapshot();
    const lost = await agent.post(`/runs/${run.id}/events`, {
      claimToken: "cs_claim_guess",
      type: "tool.completed",
      toolCallId: "c",
    });
    expect(lost.status).toBe(409);
    expect(lost.body.error.code).toBe("claim_lost");
    for (const [body, path] of [
      [{ claimToken: claim.claimToken, type: "tool.started", toolCallId: "c" }, "type"],
      [{ claimToken: claim.claimToken, type: "tool.completed" }, "toolCallId"],
      [
        { claimToken: claim.claimToken, type: "tool.failed", toolCallId: "c", revert: { x: 1 } },
        "revert",
      ],
    ] as const) {
      const answer = await agent.post(`/runs/${run.id}/events`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    // A claimed run takes reports only from its claim holder.
    const tokenless = await agent.post(`/runs/${run.id}/events`, {
      type: "tool.completed",
      toolCallId: "c",
    });
    expect(tokenless.status).toBe(409);
    expect(tokenless.body.error.code).toBe("already_claimed");
    expect(
      (
        await reviewer.post(`/runs/${run.id}/events`, {
          claimToken: claim.claimToken,
          type: "tool.completed",
          toolCallId: "c",
        })
      ).status,
    ).toBe(403);
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("POST /runs/{runId}/complete", () => {
  it("ends the run with its outcome; the claim ends with it and the token gets run_terminal from then on", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    const answer = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "completed",
      result: { refunded: 25 },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: run.id,
      status: "completed",
      result: { refunded: 25 },
      error: null,
      claim: null,
    });

    const before = await writeSnapshot();
    for (const [path, body] of [
      ["heartbeat", { claimToken: claim.claimToken }],
      ["events", { claimToken: claim.claimToken, type: "tool.completed", toolCallId: "late" }],
      ["complete", { claimToken: claim.claimToken, outcome: "failed" }],
    ] as const) {
      const late = await agent.post(`/runs/${run.id}/${path}`, body);
      expect(late.status, path).toBe(409);
      expect(late.body.error.code).toBe("run_terminal");
      expect(late.body.error.current.status).toBe("completed");
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("records a failure with its error", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    const answer = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "failed",
      error: { message: "refund API down" },
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: "failed",
      error: { message: "refund API down" },
      result: null,
    });
  });

  it("lets the creator of a run that never paused report and complete it without a claim", async () => {
    const { agent } = await team();
    const run = (await agent.post("/runs", {})).body;
    const reported = await agent.post(`/runs/${run.id}/events`, {
      type: "tool.completed",
      toolCallId: "read-1",
      result: { rows: 3 },
      revert: { undo: "nothing" },
    });
    expect(reported.status).toBe(201);
    const done = await agent.post(`/runs/${run.id}/complete`, { outcome: "completed" });
    expect(done.status).toBe(200);
    expect(done.body.status).toBe("completed");
    const again = await agent.post(`/runs/${run.id}/complete`, { outcome: "completed" });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("run_terminal");
  });

  it("is 409 claim_lost for a wrong token, 400 for a bad outcome — the run stays claimed", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    const lost = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: "cs_claim_guess",
      outcome: "completed",
    });
    expect(lost.status).toBe(409);
    expect(lost.body.error.code).toBe("claim_lost");
    const bad = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "done",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe("outcome");
    expect(
      (
        await reviewer.post(`/runs/${run.id}/complete`, {
          claimToken: claim.claimToken,
          outcome: "completed",
        })
      ).status,
    ).toBe(403);
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("resuming");
  });
});

describe("POST /runs/{runId}/rollback", () => {
  async function report(
    agent: ApiClient,
    runId: string,
    claimToken: string,
    events: Record<string, unknown>[],
  ) {
    for (const event of events) {
      const answer = await agent.post(`/runs/${runId}/events`, { claimToken, ...event });
      expect(answer.status).toBe(201);
    }
  }

  it("202; the next claim lists the reported actions that carry a revert, newest first", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    await report(agent, run.id, claim.claimToken, [
      { type: "tool.completed", toolCallId: "t1", result: { id: 1 }, revert: { undo: 1 } },
      { type: "tool.completed", toolCallId: "t2", result: { id: 2 } },
      { type: "tool.failed", toolCallId: "t3", error: "boom" },
      { type: "tool.completed", toolCallId: "t4", result: { id: 4 }, revert: { undo: 4 } },
    ]);
    await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "completed",
    });

    const requested = await agent.post(`/runs/${run.id}/rollback`, { reason: "wrong customer" });
    expect(requested.status).toBe(202);
    expect(requested.body).toMatchObject({ id: run.id, status: "ready" });
    expect(requested.body.rollbackRequestedAt).toMatch(ISO);

    const reclaim = await agent.post(`/runs/${run.id}/claim`, { workerId: "reverter" });
    expect(reclaim.status).toBe(200);
    expect(reclaim.body.rollback.map((a: { toolCallId: string }) => a.toolCallId)).toEqual([
      "t4",
      "t1",
    ]);
    expect(reclaim.body.rollback[0]).toMatchObject({
      toolCallId: "t4",
      revert: { undo: 4 },
      result: { id: 4 },
    });
    expect(reclaim.body.rollback[0].reportedAt).toMatch(ISO);
    expect(reclaim.body.rollback[0].seq).toBeGreaterThan(reclaim.body.rollback[1].seq);

    // a reverted action is not listed again; finishing the rollback claim answers the request
    await report(agent, run.id, reclaim.body.claimToken, [
      { type: "action.reverted", toolCallId: "t4" },
    ]);
    const done = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: reclaim.body.claimToken,
      outcome: "failed",
      error: "t1 could not be reverted",
    });
    expect(done.body).toMatchObject({ status: "failed", rollbackRequestedAt: null });
    expect((await agent.post(`/runs/${run.id}/rollback`, {})).status).toBe(202);
    const again = await agent.post(`/runs/${run.id}/claim`, { workerId: "reverter" });
    expect(again.body.rollback.map((a: { toolCallId: string }) => a.toolCallId)).toEqual(["t1"]);
  });

  it("may be asked by a reviewer of the run's queue, with an empty body; 404 for others", async () => {
    const { agent, reviewer } = await team();
    const other = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    await report(agent, run.id, claim.claimToken, [
      { type: "tool.completed", toolCallId: "t1", revert: { undo: 1 } },
    ]);
    await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "completed",
    });

    const before = await writeSnapshot();
    expect((await other.reviewer.post(`/runs/${run.id}/rollback`, {})).status).toBe(404);
    expect((await other.agent.post(`/runs/${run.id}/rollback`, {})).status).toBe(404);
    expect(
      (await reviewer.post(`/runs/00000000-0000-7000-8000-000000000000/rollback`, {})).status,
    ).toBe(404);
    const bad = await reviewer.post(`/runs/${run.id}/rollback`, { reason: ["not", "text"] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe("reason");
    expect(await writeSnapshot()).toEqual(before);

    const byReviewer = await reviewer.raw(`/runs/${run.id}/rollback`, { method: "POST" });
    expect(byReviewer.status).toBe(202);
    const reclaim = await agent.post(`/runs/${run.id}/claim`, { workerId: "w" });
    expect(reclaim.body.rollback.map((a: { toolCallId: string }) => a.toolCallId)).toEqual(["t1"]);
  });

  it("asked while a worker holds the run, reaches the next claim after that worker completes", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer);
    await report(agent, run.id, claim.claimToken, [
      { type: "tool.completed", toolCallId: "t1", revert: { undo: 1 } },
    ]);
    expect((await reviewer.post(`/runs/${run.id}/rollback`, { reason: "stop" })).status).toBe(202);
    // the worker did not see the request (it claimed before it) and finishes
    const done = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "completed",
      result: "ok",
    });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ status: "ready", result: "ok" });
    expect(done.body.rollbackRequestedAt).toMatch(ISO);

    const reclaim = await agent.post(`/runs/${run.id}/claim`, { workerId: "reverter" });
    expect(reclaim.status).toBe(200);
    expect(reclaim.body.rollback.map((a: { toolCallId: string }) => a.toolCallId)).toEqual(["t1"]);
    await report(agent, run.id, reclaim.body.claimToken, [
      { type: "action.reverted", toolCallId: "t1" },
    ]);
    const reverted = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: reclaim.body.claimToken,
      outcome: "completed",
    });
    expect(reverted.body).toMatchObject({ status: "completed", rollbackRequestedAt: null });
  });
});

describe("a rollback with nothing left to revert (issue 24)", () => {
  it("is 409 run_terminal once every reported action was reverted, and the run page offers nothing", async () => {
    const t = await makeQuickTeam();
    const agent = apiClient(server.baseUrl, t.agent.key);
    const reviewer = apiClient(server.baseUrl, t.reviewer.token);
    const { run, claim } = await claimedRun(agent, reviewer);
    await agent.post(`/runs/${run.id}/events`, {
      claimToken: claim.claimToken,
      type: "tool.completed",
      toolCallId: "t1",
      revert: { undo: 1 },
    });
    await agent.post(`/runs/${run.id}/complete`, {
      claimToken: claim.claimToken,
      outcome: "completed",
    });
    expect((await reviewer.post(`/runs/${run.id}/rollback`, { reason: "undo" })).status).toBe(202);
    const reclaim = await agent.post(`/runs/${run.id}/claim`, { workerId: "reverter" });
    expect(reclaim.body.rollback).toHaveLength(1);
    await agent.post(`/runs/${run.id}/events`, {
      claimToken: reclaim.body.claimToken,
      type: "action.reverted",
      toolCallId: "t1",
    });
    const reverted = await agent.post(`/runs/${run.id}/complete`, {
      claimToken: reclaim.body.claimToken,
      outcome: "completed",
    });
    expect(reverted.body).toMatchObject({ status: "completed", rollbackRequestedAt: null });

    // Nothing is left: a second request, by the reviewer or by the agent, changes nothing.
    const before = await writeSnapshot();
    for (const caller of [reviewer, agent]) {
      const again = await caller.post(`/runs/${run.id}/rollback`, { reason: "again" });
      expect(again.status, JSON.stringify(again.body)).toBe(409);
      expect(again.body.error).toMatchObject({
        code: "run_terminal",
        message:
          "Nothing left to roll back: the one action this run reported with revert data was already reverted.",
        current: { id: run.id, status: "completed", rollbackRequestedAt: null },
      });
    }
    expect(await writeSnapshot()).toEqual(before);

    // The run page says so instead of offering "Request rollback…".
    const page = await fetch(`${server.baseUrl}/runs/${run.id}`, {
      headers: { cookie: await sessionCookie(server.baseUrl, t.reviewer.email) },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('data-testid="rollback-unavailable"');
    expect(html).toContain("Nothing left to roll back");
    expect(html).not.toContain("Request rollback…");
  });
});

describe.concurrent("leases", () => {
  it("a lease nobody renews runs out: another worker claims, and the old token gets claim_lost everywhere", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer, "crashed-worker", 5);
    const claimedAt = Date.now();

    // worker 2 keeps trying; it must be refused until the lease has run out, then succeed
    let taken: { status: number; body: any } | null = null;
    const refusals: string[] = [];
    let lastRefusalSentAt = 0;
    while (Date.now() - claimedAt < 9000) {
      const sentAt = Date.now();
      const attempt = await agent.post(`/runs/${run.id}/claim`, { workerId: "worker-2" });
      if (attempt.status === 200) {
        taken = attempt;
        break;
      }
      refusals.push(attempt.body.error.code);
      lastRefusalSentAt = sentAt;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(taken, "worker 2 never got the run").not.toBeNull();
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(claim.leaseExpiresAt));
    // the lease held until close to its end
    expect(lastRefusalSentAt).toBeGreaterThan(Date.parse(claim.leaseExpiresAt) - 2000);
    expect(new Set(refusals)).toEqual(new Set(["already_claimed"]));
    expect(taken!.body.run.claim.workerId).toBe("worker-2");
    expect(taken!.body.claimToken).not.toBe(claim.claimToken);

    // (this test runs beside another: check this run's rows, not the whole database)
    const before = await rowsOf(run.id);
    for (const [path, body] of [
      ["heartbeat", { claimToken: claim.claimToken }],
      ["events", { claimToken: claim.claimToken, type: "tool.completed", toolCallId: "zombie" }],
      ["complete", { claimToken: claim.claimToken, outcome: "completed" }],
    ] as const) {
      const late = await agent.post(`/runs/${run.id}/${path}`, body);
      expect(late.status, path).toBe(409);
      expect(late.body.error.code).toBe("claim_lost");
      expect(late.body.error.current.claim.workerId).toBe("worker-2");
    }
    const pause = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ claimToken: claim.claimToken }),
    );
    expect(pause.status).toBe(409);
    expect(pause.body.error.code).toBe("claim_lost");
    expect(await rowsOf(run.id)).toEqual(before);

    // the new holder is unaffected
    expect(
      (await agent.post(`/runs/${run.id}/heartbeat`, { claimToken: taken!.body.claimToken }))
        .status,
    ).toBe(200);
  });

  it("a heartbeat keeps the run past its first lease", async () => {
    const { agent, reviewer } = await team();
    const { run, claim } = await claimedRun(agent, reviewer, "alive-worker", 5);
    const beat = await agent.post(`/runs/${run.id}/heartbeat`, {
      claimToken: claim.claimToken,
      leaseSecs: 60,
    });
    expect(beat.status).toBe(200);
    // past the first lease, and past a sweep
    await new Promise((r) =>
      setTimeout(r, Math.max(0, Date.parse(claim.leaseExpiresAt) - Date.now()) + 600),
    );
    const other = await agent.post(`/runs/${run.id}/claim`, { workerId: "worker-2" });
    expect(other.status).toBe(409);
    expect(other.body.error.code).toBe("already_claimed");
    expect(other.body.error.holder).toBe("alive-worker");
    const event = await agent.post(`/runs/${run.id}/events`, {
      claimToken: claim.claimToken,
      type: "tool.completed",
      toolCallId: "t",
    });
    expect(event.status).toBe(201);
  });
});

describe("reviewers and runs", () => {
  it("a reviewer outside every queue of the run cannot ask for its rollback", async () => {
    const { agent, reviewer } = await team();
    const { run } = await readyRun(agent, reviewer);
    const [stranger] = await makeReviewers(1, null);
    const answer = await apiClient(server.baseUrl, stranger!.token).post(
      `/runs/${run.id}/rollback`,
      {},
    );
    expect(answer.status).toBe(404);
  });
});
