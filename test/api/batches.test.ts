import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  approveBatch,
  makeQuickTeam,
  makeReviewers,
  pausedRun,
  startApiServer,
  writeSnapshot,
} from "../support/api-fixtures";
import { makeAgentKey, makeQueue } from "../support/factories";
import { apiClient, refundBatch } from "../support/http";
import type { TestServer } from "../support/server";

// GET /batches/{id} (and its long poll), POST /batches/{id}/cancel, the deadline sweeper,
// remembered approvals, and GET /queue.

let server: TestServer;

beforeAll(async () => {
  // a quick sweeper, so deadline tests wait for the deadline and not for the next sweep
  server = await startApiServer("batches", { SWEEP_INTERVAL_MS: "200" });
});
afterAll(() => server?.stop());

async function team(options: Parameters<typeof makeQuickTeam>[0] = {}) {
  const t = await makeQuickTeam(options);
  return {
    ...t,
    agent: apiClient(server.baseUrl, t.agent.key),
    reviewer: apiClient(server.baseUrl, t.reviewer.token),
  };
}

describe("GET /batches/{batchId}", () => {
  it("answers the batch to its agent and to reviewers of its queue, 404 to everyone else", async () => {
    const { agent, reviewer } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const mine = await agent.get(`/batches/${batch.id}`);
    expect(mine.status).toBe(200);
    expect(mine.body).toEqual(batch);
    expect((await reviewer.get(`/batches/${batch.id}`)).body).toEqual(batch);

    const other = await team();
    const theirs = await other.agent.get(`/batches/${batch.id}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe("not_found");
    expect((await other.reviewer.get(`/batches/${batch.id}`)).status).toBe(404);
    const unknown = await agent.get("/batches/00000000-0000-7000-8000-000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });

  it("refuses a wait outside 0–60 s or not a number", async () => {
    const { agent } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    for (const wait of ["61", "-1", "soon"]) {
      const answer = await agent.get(`/batches/${batch.id}?wait=${wait}`);
      expect(answer.status, wait).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues[0].path).toBe("wait");
    }
  });

  it("with wait, answers as soon as the batch is decided", async () => {
    const { agent, reviewer } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const started = Date.now();
    let answeredAt = 0;
    const held = agent
      .get(`/batches/${batch.id}?wait=5`)
      .then((a) => ((answeredAt = Date.now()), a));
    await new Promise((r) => setTimeout(r, 300));
    await approveBatch(reviewer, batch);
    const decidedAt = Date.now();
    const answer = await held;
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: batch.id, status: "decided", outcome: "approved" });
    // held while pending, answered right after the decision: well before the 5 s wait
    expect(answeredAt - started).toBeGreaterThanOrEqual(300);
    expect(answeredAt - started).toBeLessThan(3500);
    expect(answeredAt - decidedAt).toBeLessThan(1500);
  });

  it("with wait, answers still pending when the wait ends and nobody decided", async () => {
    const { agent } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const started = Date.now();
    const answer = await agent.get(`/batches/${batch.id}?wait=1`);
    const elapsed = Date.now() - started;
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe("pending");
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(4000);
  });

  it("with wait, answers a settled batch at once", async () => {
    const { agent, reviewer } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    await approveBatch(reviewer, batch);
    const started = Date.now();
    const answer = await agent.get(`/batches/${batch.id}?wait=30`);
    expect(answer.body.status).toBe("decided");
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe("POST /batches/{batchId}/cancel", () => {
  it("withdraws a pending batch: its calls are cancelled and the run is back in the agent's hands", async () => {
    const { agent } = await team();
    const { run, batch } = await pausedRun(agent, refundBatch());
    const answer = await agent.post(`/batches/${batch.id}/cancel`, {
      reason: "the customer withdrew",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      id: batch.id,
      status: "cancelled",
      cancelReason: "the customer withdrew",
    });
    expect(answer.body.calls.map((c: { status: string }) => c.status)).toEqual(["cancelled"]);
    expect(answer.body.decidedAt).toEqual(expect.any(String));
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("running");
    // so it can pause again without a claim
    expect((await agent.post(`/runs/${run.id}/batches`, refundBatch())).status).toBe(201);
  });

  it("accepts an empty body", async () => {
    const { agent } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const answer = await agent.raw(`/batches/${batch.id}/cancel`, { method: "POST" });
    expect(answer.status).toBe(200);
    expect((await answer.json()).status).toBe("cancelled");
  });

  it("is 409 not_pending once the batch is settled (cancelled or decided), and changes nothing", async () => {
    const { agent, reviewer } = await team();
    const cancelled = (await pausedRun(agent, refundBatch())).batch;
    await agent.post(`/batches/${cancelled.id}/cancel`, {});
    const decided = (await pausedRun(agent, refundBatch())).batch;
    await approveBatch(reviewer, decided);

    const before = await writeSnapshot();
    const again = await agent.post(`/batches/${cancelled.id}/cancel`, {});
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("not_pending");
    expect(again.body.error.current).toMatchObject({ id: cancelled.id, status: "cancelled" });
    const late = await agent.post(`/batches/${decided.id}/cancel`, {});
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("not_pending");
    expect(late.body.error.current).toMatchObject({
      id: decided.id,
      status: "decided",
      outcome: "approved",
    });
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 403 for a reviewer, 404 for another agent or an unknown id, 400 for a bad reason — writing nothing", async () => {
    const { agent, reviewer } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const other = await team();
    const before = await writeSnapshot();
    const byReviewer = await reviewer.post(`/batches/${batch.id}/cancel`, {});
    expect(byReviewer.status).toBe(403);
    expect(byReviewer.body.error.code).toBe("forbidden");
    const byOther = await other.agent.post(`/batches/${batch.id}/cancel`, {});
    expect(byOther.status).toBe(404);
    expect(byOther.body.error.code).toBe("not_found");
    expect(
      (await agent.post(`/batches/00000000-0000-7000-8000-000000000000/cancel`, {})).status,
    ).toBe(404);
    const bad = await agent.post(`/batches/${batch.id}/cancel`, { reason: 42 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues[0].path).toBe("reason");
    expect(await writeSnapshot()).toEqual(before);
    expect((await agent.get(`/batches/${batch.id}`)).body.status).toBe("pending");
  });

  it("leaves a cancelled batch's calls undecidable: 409 not_pending", async () => {
    const { agent, reviewer } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    await agent.post(`/batches/${batch.id}/cancel`, {});
    const answer = await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("not_pending");
    expect(answer.body.error.current).toMatchObject({
      id: batch.calls[0].id,
      status: "cancelled",
      decision: null,
    });
  });
});

describe("deadlines", () => {
  it("settles overdue batches by onTimeout: reject (fail closed) and approve, with source timeout", async () => {
    // A queue that lets agents ask for approval at a deadline as short as this test's.
    const { agent, reviewer } = await team({ approveOnTimeout: true, approveOnTimeoutMinSecs: 1 });
    const rejecting = await pausedRun(agent, refundBatch({ timeoutSecs: 1, onTimeout: "reject" }));
    const approving = await pausedRun(agent, refundBatch({ timeoutSecs: 1, onTimeout: "approve" }));
    // two calls: the one a reviewer decided in time keeps its decision
    const partly = await pausedRun(agent, {
      timeoutSecs: 1,
      calls: [
        { toolCallId: "a", toolName: "refund_order", args: { orderId: "A-1" } },
        { toolCallId: "b", toolName: "refund_order", args: { orderId: "A-2" } },
      ],
    });
    await reviewer.post(`/calls/${partly.batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });

    const started = Date.now();
    const waitFor = ({ batch }: { batch: { id: string } }) =>
      agent.get(`/batches/${batch.id}?wait=5`);
    const [rejected, approved, mixed] = await Promise.all([
      waitFor(rejecting),
      waitFor(approving),
      waitFor(partly),
    ]);
    // timeoutSecs 1: settled within a few seconds, not at the end of the 5 s wait
    expect(Date.now() - started).toBeLessThan(4500);

    expect(rejected.body).toMatchObject({ status: "expired", outcome: "rejected" });
    expect(rejected.body.calls[0]).toMatchObject({
      status: "expired",
      decision: { outcome: "rejected", source: "timeout", by: null, editedArgs: null },
    });
    expect(approved.body).toMatchObject({ status: "expired", outcome: "approved" });
    expect(approved.body.calls[0]).toMatchObject({
      status: "approved",
      decision: { outcome: "approved", source: "timeout", by: null },
    });
    expect(mixed.body).toMatchObject({ status: "expired", outcome: "mixed" });
    expect(mixed.body.calls.map((c: { status: string }) => c.status)).toEqual([
      "approved",
      "expired",
    ]);
    expect(mixed.body.calls[0].decision.source).toBe("reviewer");

    // the runs are ready to be claimed, and the calls can no longer be decided
    for (const { run } of [rejecting, approving, partly]) {
      expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("ready");
    }
    const late = await reviewer.post(`/calls/${rejecting.batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("not_pending");
    const lateOnApproved = await reviewer.post(`/calls/${approving.batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
    });
    expect(lateOnApproved.status).toBe(409);
    expect(lateOnApproved.body.error.code).toBe("already_decided");
  });

  it("refuses an unknown onTimeout with invalid_request, writing nothing", async () => {
    const { agent } = await team();
    const run = (await agent.post("/runs", {})).body;
    const before = await writeSnapshot();
    const onCreate = await agent.post("/runs", {
      batch: refundBatch({ timeoutSecs: 1, onTimeout: "ignore" }),
    });
    expect(onCreate.status).toBe(400);
    expect(onCreate.body.error.code).toBe("invalid_request");
    expect(onCreate.body.error.issues.map((i: { path: string }) => i.path)).toContain(
      "batch.onTimeout",
    );
    const onPause = await agent.post(
      `/runs/${run.id}/batches`,
      refundBatch({ onTimeout: "ignore" }),
    );
    expect(onPause.status).toBe(400);
    expect(onPause.body.error.issues.map((i: { path: string }) => i.path)).toContain("onTimeout");
    expect(await writeSnapshot()).toEqual(before);
  });
});

describe("remembered approvals", () => {
  const refund = (args: Record<string, unknown>, toolCallId = `t-${Math.random()}`) => ({
    toolCallId,
    toolName: "refund_order",
    args,
  });

  it("scope run: a later call with the same tool and args in the same run is approved at creation", async () => {
    const { agent, reviewer } = await team();
    const { run, batch } = await pausedRun(agent, {
      calls: [refund({ orderId: "A-7", amount: 30, note: { a: 1, b: 2 } })],
    });
    const approved = await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
      scope: "run",
    });
    expect(approved.status).toBe(200);
    expect(approved.body.call.decision.scope).toBe("run");

    const claim = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;
    // the same args with their keys in another order (nested too), next to a call never approved
    const next = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: claim.claimToken,
      calls: [
        refund({ note: { b: 2, a: 1 }, amount: 30, orderId: "A-7" }),
        refund({ orderId: "A-7", amount: 31 }),
      ],
    });
    expect(next.status).toBe(201);
    expect(next.body.status).toBe("pending");
    const [remembered, fresh] = next.body.calls;
    expect(remembered.actionHash).toBe(batch.calls[0].actionHash);
    expect(remembered).toMatchObject({
      status: "approved",
      decision: {
        outcome: "approved",
        source: "memory",
        scope: "run",
        by: { id: approved.body.call.decision.by.id },
      },
    });
    expect(fresh).toMatchObject({ status: "pending", decision: null });

    // when memory settles every call, the batch is decided at creation and the run is ready at once
    await reviewer.post(`/calls/${fresh.id}/decision`, { outcome: "approve", expectedRevision: 1 });
    const claim2 = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;
    const third = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: claim2.claimToken,
      calls: [refund({ amount: 30, orderId: "A-7", note: { a: 1, b: 2 } })],
    });
    expect(third.status).toBe(201);
    expect(third.body).toMatchObject({ status: "decided", outcome: "approved" });
    expect(third.body.calls[0].decision.source).toBe("memory");
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("ready");
  });

  it("scope run does not reach another run, nor another agent", async () => {
    const { agent, reviewer, queue } = await team();
    const args = { orderId: "B-1", amount: 5 };
    const { batch } = await pausedRun(agent, { calls: [refund(args)] });
    await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
      scope: "run",
    });

    const otherRun = await pausedRun(agent, { calls: [refund(args)] });
    expect(otherRun.batch.calls[0]).toMatchObject({ status: "pending", decision: null });
    const otherKey = await makeAgentKey({ queues: [queue.name] });
    const otherAgent = await pausedRun(apiClient(server.baseUrl, otherKey.key), {
      calls: [refund(args)],
    });
    expect(otherAgent.batch.calls[0].status).toBe("pending");
  });

  it("scope conversation: a run of the same conversation is approved at creation, another conversation is not", async () => {
    const { agent, reviewer } = await team();
    const conversationId = `conv-${Math.random()}`;
    const args = { orderId: "C-1", amount: 12 };
    const first = await pausedRun(agent, { calls: [refund(args)] }, { conversationId });
    const decided = await reviewer.post(`/calls/${first.batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
      scope: "conversation",
    });
    expect(decided.status).toBe(200);

    const sameConversation = await agent.post("/runs", {
      conversationId,
      batch: { calls: [refund({ amount: 12, orderId: "C-1" })] },
    });
    expect(sameConversation.status).toBe(201);
    expect(sameConversation.body.status).toBe("ready");
    expect(sameConversation.body.batches[0]).toMatchObject({
      status: "decided",
      outcome: "approved",
    });
    expect(sameConversation.body.batches[0].calls[0].decision).toMatchObject({
      source: "memory",
      scope: "conversation",
    });

    const otherConversation = await agent.post("/runs", {
      conversationId: "another",
      batch: { calls: [refund(args)] },
    });
    expect(otherConversation.body.status).toBe("waiting_approval");
    expect(otherConversation.body.batches[0].calls[0].status).toBe("pending");
    const noConversation = await agent.post("/runs", { batch: { calls: [refund(args)] } });
    expect(noConversation.body.batches[0].calls[0].status).toBe("pending");
  });

  it("an approval without scope (once) is not remembered", async () => {
    const { agent, reviewer } = await team();
    const args = { orderId: "D-1" };
    const { run, batch } = await pausedRun(agent, { calls: [refund(args)] });
    await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    const claim = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;
    const next = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: claim.claimToken,
      calls: [refund(args)],
    });
    expect(next.body.calls[0].status).toBe("pending");
  });
});

describe("GET /queue", () => {
  it("lists the reviewer's queues' batches newest first, a page at a time, filtered by status", async () => {
    const queue = await makeQueue();
    const elsewhere = await makeQueue();
    const [reviewerActor] = await makeReviewers(1, queue.name);
    const key = await makeAgentKey({ queues: [queue.name, elsewhere.name] });
    const agent = apiClient(server.baseUrl, key.key);
    const reviewer = apiClient(server.baseUrl, reviewerActor!.token);

    const created: { id: string; calls: { id: string; revision: number }[] }[] = [];
    for (let i = 0; i < 5; i++) created.push((await pausedRun(agent, refundBatch())).batch);
    await pausedRun(agent, refundBatch({ queue: elsewhere.name })); // not this reviewer's queue
    await approveBatch(reviewer, created[1]!);
    await agent.post(`/batches/${created[3]!.id}/cancel`, {});
    const pendingIds = [created[4]!, created[2]!, created[0]!].map((b) => b.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: {
        status: number;
        body: { batches: { id: string; status: string }[]; nextCursor: string | null };
      } = await reviewer.get(`/queue?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      expect(page.body.batches.length).toBeLessThanOrEqual(2);
      for (const b of page.body.batches) expect(b.status).toBe("pending");
      seen.push(...page.body.batches.map((b) => b.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(pages).toBe(2);
    expect(seen).toEqual(pendingIds);

    // decided means decided: the withdrawn batch is listed under cancelled, not here
    const decided = await reviewer.get("/queue?status=decided");
    expect(decided.body.batches.map((b: { id: string }) => b.id)).toEqual([created[1]!.id]);
    expect(decided.body.nextCursor).toBeNull();
    const cancelled = await reviewer.get("/queue?status=cancelled");
    expect(cancelled.body.batches.map((b: { id: string }) => b.id)).toEqual([created[3]!.id]);
    const all = await reviewer.get("/queue?status=all&limit=5");
    expect(all.body.batches.map((b: { id: string }) => b.id)).toEqual(
      [...created].reverse().map((b) => b.id),
    );
    expect(all.body.nextCursor).toBeNull();
    const byQueue = await reviewer.get(`/queue?queue=${queue.id}&status=all&limit=200`);
    expect(byQueue.body.batches).toHaveLength(5);
  });

  it("shows only queues the reviewer belongs to: naming another queue is 404", async () => {
    const { reviewer } = await team();
    const other = await team();
    await pausedRun(other.agent, refundBatch());
    const mine = await reviewer.get("/queue?status=all");
    expect(mine.status).toBe(200);
    expect(
      mine.body.batches.every((b: { queue: { id: string } }) => b.queue.id !== other.queue.id),
    ).toBe(true);
    const theirs = await reviewer.get(`/queue?queue=${other.queue.id}`);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe("not_found");

    const [nobody] = await makeReviewers(1, null);
    const empty = await apiClient(server.baseUrl, nobody!.token).get("/queue?status=all");
    expect(empty.body).toEqual({ batches: [], nextCursor: null });
  });

  it("refuses bad parameters with issues, and agent keys with 403", async () => {
    const { reviewer, agent } = await team();
    for (const [query, path] of [
      ["status=maybe", "status"],
      ["limit=0", "limit"],
      ["limit=201", "limit"],
      ["limit=many", "limit"],
      ["cursor=not-a-cursor", "cursor"],
    ]) {
      const answer = await reviewer.get(`/queue?${query}`);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues[0].path).toBe(path);
    }
    const byAgent = await agent.get("/queue");
    expect(byAgent.status).toBe(403);
    expect(byAgent.body.error.code).toBe("forbidden");
  });
});
