import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  makeQuickTeam,
  makeReviewers,
  pausedRun,
  rowsOf,
  startApiServer,
  writeSnapshot,
} from "../support/api-fixtures";
import { makeAgentKey, makeQueue } from "../support/factories";
import { apiClient, refundBatch } from "../support/http";
import type { TestServer } from "../support/server";

// POST /calls/{id}/decision and POST /batches/{id}/decision: approve, reject, edit, quorum,
// revisions, and the all-or-nothing batch decision.

let server: TestServer;

beforeAll(async () => {
  // a slow sweeper: nothing here waits for it, and one test decides between a deadline and its sweep
  server = await startApiServer("decisions", { SWEEP_INTERVAL_MS: "60000" });
});
afterAll(() => server?.stop());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A queue with `reviewers` members (the first named Dana Reviewer) and an agent key for it. */
async function team(options: { requiredApprovals?: number; reviewers?: number } = {}) {
  const t = await makeQuickTeam(options);
  const more = await makeReviewers((options.reviewers ?? 1) - 1, t.queue.name);
  const reviewers = [t.reviewer, ...more];
  return {
    ...t,
    reviewers,
    agent: apiClient(server.baseUrl, t.agent.key),
    as: reviewers.map((r) => apiClient(server.baseUrl, r.token)),
  };
}

const refundSchema = {
  type: "object",
  properties: { orderId: { type: "string" }, amount: { type: "number", maximum: 100 } },
  required: ["orderId", "amount"],
  additionalProperties: false,
};

function calls(n: number, extra: Record<string, unknown> = {}) {
  return {
    calls: Array.from({ length: n }, (_, i) => ({
      toolCallId: `call-${i}`,
      toolName: "refund_order",
      args: { orderId: `A-${i}`, amount: 10 + i },
      ...extra,
    })),
  };
}

describe("POST /calls/{callId}/decision", () => {
  it("approves a call: the decision names the reviewer, the batch settles, the run is ready", async () => {
    const { agent, as, reviewer } = await team();
    const { run, batch } = await pausedRun(agent, refundBatch());
    const callId = batch.calls[0].id;
    const answer = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
      reason: "looks right",
    });
    expect(answer.status).toBe(200);
    const { call, batch: settled } = answer.body;
    expect(call).toMatchObject({
      id: callId,
      status: "approved",
      revision: 1,
      args: { orderId: "A-1001", amount: 25 },
      decision: {
        outcome: "approved",
        source: "reviewer",
        by: { id: reviewer.id, name: "Dana Reviewer" },
        reason: "looks right",
        editedArgs: null,
        scope: "once",
      },
      votes: [
        { reviewer: { id: reviewer.id, name: "Dana Reviewer" }, outcome: "approved", revision: 1 },
      ],
    });
    expect(call.decision.at).toMatch(ISO);
    expect(settled).toMatchObject({ id: batch.id, status: "decided", outcome: "approved" });
    expect(settled.decidedAt).toMatch(ISO);
    expect(settled.calls[0]).toEqual(call);
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("ready");
  });

  it("rejects a call with a reason; one rejected call of two makes the batch mixed", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, calls(2));
    const rejected = await as[0]!.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
      reason: "too much",
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body.call).toMatchObject({
      status: "rejected",
      decision: { outcome: "rejected", source: "reviewer", reason: "too much" },
    });
    expect(rejected.body.batch.status).toBe("pending");
    const approved = await as[0]!.post(`/calls/${batch.calls[1].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(approved.body.batch).toMatchObject({ status: "decided", outcome: "mixed" });

    const alone = await pausedRun(agent, refundBatch());
    const only = await as[0]!.post(`/calls/${alone.batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
    });
    expect(only.body.batch).toMatchObject({ status: "decided", outcome: "rejected" });
  });

  it("is 409 already_decided for whoever comes second, naming the first decision, and changes nothing", async () => {
    const { agent, as, reviewers } = await team({ reviewers: 2 });
    const { batch } = await pausedRun(agent, refundBatch());
    const callId = batch.calls[0].id;
    await as[0]!.post(`/calls/${callId}/decision`, { outcome: "approve", expectedRevision: 1 });
    const before = await writeSnapshot();
    for (const [client, outcome] of [
      [as[1]!, "reject"],
      [as[0]!, "approve"],
    ] as const) {
      const late = await client.post(`/calls/${callId}/decision`, { outcome, expectedRevision: 1 });
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe("already_decided");
      expect(late.body.error.message).toMatch(/^Approved by Dana Reviewer \d+ s ago\.$/);
      expect(late.body.error.current).toMatchObject({
        id: callId,
        status: "approved",
        decision: { by: { id: reviewers[0]!.id } },
      });
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("with quorum 2: one approval leaves the call pending, a second reviewer's approves it, the same reviewer twice is 409", async () => {
    const { agent, as, reviewers } = await team({ requiredApprovals: 2, reviewers: 2 });
    const { batch } = await pausedRun(agent, refundBatch());
    const callId = batch.calls[0].id;
    expect(batch.calls[0].requiredApprovals).toBe(2);

    const first = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(first.status).toBe(200);
    expect(first.body.call).toMatchObject({ status: "pending", revision: 1, decision: null });
    expect(first.body.call.votes).toHaveLength(1);
    expect(first.body.batch.status).toBe("pending");

    const before = await writeSnapshot();
    const twice = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(twice.status).toBe(409);
    expect(twice.body.error.code).toBe("already_decided");
    expect(twice.body.error.current).toMatchObject({
      status: "pending",
      votes: [{ reviewer: { id: reviewers[0]!.id } }],
    });
    expect(await writeSnapshot()).toEqual(before);

    const second = await as[1]!.post(`/calls/${callId}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(second.status).toBe(200);
    expect(second.body.call).toMatchObject({
      status: "approved",
      decision: { outcome: "approved", by: { id: reviewers[1]!.id } },
    });
    expect(second.body.call.votes.map((v: { reviewer: { id: string } }) => v.reviewer.id)).toEqual([
      reviewers[0]!.id,
      reviewers[1]!.id,
    ]);
    expect(second.body.batch).toMatchObject({ status: "decided", outcome: "approved" });
  });

  it("with quorum 2: a single rejection rejects", async () => {
    const { agent, as } = await team({ requiredApprovals: 2, reviewers: 2 });
    const { batch } = await pausedRun(agent, refundBatch());
    await as[0]!.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    const answer = await as[1]!.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
    });
    expect(answer.body.call.status).toBe("rejected");
    expect(answer.body.batch.outcome).toBe("rejected");
  });

  it("an edit is a new revision: an older revision is 409 stale_revision and changes nothing; old approvals no longer count", async () => {
    const { agent, as, reviewers } = await team({ requiredApprovals: 2, reviewers: 3 });
    const { batch } = await pausedRun(agent, {
      calls: [
        {
          toolCallId: "r",
          toolName: "refund_order",
          args: { orderId: "A-1", amount: 80 },
          inputSchema: refundSchema,
        },
      ],
    });
    const callId = batch.calls[0].id;

    // reviewer 0 approves revision 1; reviewer 1 edits (revision 2, their vote is the first for it)
    await as[0]!.post(`/calls/${callId}/decision`, { outcome: "approve", expectedRevision: 1 });
    const edited = await as[1]!.post(`/calls/${callId}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { orderId: "A-1", amount: 40 },
    });
    expect(edited.status).toBe(200);
    expect(edited.body.call).toMatchObject({
      status: "pending",
      revision: 2,
      pendingEdit: { orderId: "A-1", amount: 40 },
      args: { amount: 80 },
    });
    // The call's hash stays that of the agent's args; each vote carries the hash of what it approved.
    expect(edited.body.call.actionHash).toBe(batch.calls[0].actionHash);
    const [oldVote, editVote] = edited.body.call.votes;
    expect(oldVote).toMatchObject({ revision: 1, actionHash: batch.calls[0].actionHash });
    expect(editVote.revision).toBe(2);
    expect(editVote.actionHash).toMatch(/^[0-9a-f]{64}$/);
    expect(editVote.actionHash).not.toBe(batch.calls[0].actionHash);

    const before = await writeSnapshot();
    const rowsBefore = await rowsOf(batch.runId);
    for (const outcome of ["approve", "reject"]) {
      const stale = await as[2]!.post(`/calls/${callId}/decision`, {
        outcome,
        expectedRevision: 1,
      });
      expect(stale.status).toBe(409);
      expect(stale.body.error.code).toBe("stale_revision");
      expect(stale.body.error.current).toMatchObject({
        id: callId,
        revision: 2,
        status: "pending",
        pendingEdit: { amount: 40 },
      });
    }
    expect(await writeSnapshot()).toEqual(before);
    expect(await rowsOf(batch.runId)).toEqual(rowsBefore);

    // reviewer 0's approval of revision 1 does not count for revision 2: they approve again
    const approved = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "approve",
      expectedRevision: 2,
    });
    expect(approved.status).toBe(200);
    expect(approved.body.call).toMatchObject({
      status: "approved",
      revision: 2,
      args: { orderId: "A-1", amount: 80 },
      pendingEdit: null,
      decision: {
        outcome: "approved",
        by: { id: reviewers[0]!.id },
        editedArgs: { orderId: "A-1", amount: 40 },
      },
    });
    expect(approved.body.call.votes.map((v: { revision: number }) => v.revision)).toEqual([
      1, 2, 2,
    ]);
  });

  it("edit: editedArgs must match the call's inputSchema (400 with issues, nothing written); the approved call keeps args and carries editedArgs", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, {
      calls: [
        {
          toolCallId: "r",
          toolName: "refund_order",
          args: { orderId: "A-1", amount: 80 },
          inputSchema: refundSchema,
        },
      ],
    });
    const callId = batch.calls[0].id;

    const before = await writeSnapshot();
    const bad = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { orderId: "A-1", amount: "lots", extra: true },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe("invalid_request");
    expect(bad.body.error.issues.map((i: { path: string }) => i.path)).toContain(
      "editedArgs.amount",
    );
    expect(bad.body.error.issues.length).toBeGreaterThanOrEqual(2);
    const tooMuch = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { orderId: "A-1", amount: 500 },
    });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.issues[0].path).toBe("editedArgs.amount");
    expect(await writeSnapshot()).toEqual(before);
    expect((await agent.get(`/batches/${batch.id}`)).body.calls[0]).toMatchObject({
      status: "pending",
      revision: 1,
      votes: [],
    });

    const good = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { orderId: "A-1", amount: 50 },
      reason: "half",
    });
    expect(good.status).toBe(200);
    expect(good.body.call).toMatchObject({
      status: "approved",
      revision: 2,
      args: { orderId: "A-1", amount: 80 },
      decision: {
        outcome: "approved",
        source: "reviewer",
        editedArgs: { orderId: "A-1", amount: 50 },
        reason: "half",
      },
    });
    // and the agent sees the same when it reads the batch
    expect((await agent.get(`/batches/${batch.id}`)).body.calls[0].decision.editedArgs).toEqual({
      orderId: "A-1",
      amount: 50,
    });
  });

  it("edit without an inputSchema takes any object", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const answer = await as[0]!.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { anything: [1, 2] },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.call.decision.editedArgs).toEqual({ anything: [1, 2] });
  });

  it("refuses malformed decisions with issues and writes nothing", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const callId = batch.calls[0].id;
    const before = await writeSnapshot();
    const cases: [unknown, string][] = [
      [{ outcome: "maybe", expectedRevision: 1 }, "outcome"],
      [{ outcome: "approve" }, "expectedRevision"],
      [{ outcome: "approve", expectedRevision: 0 }, "expectedRevision"],
      [{ outcome: "approve", expectedRevision: "1" }, "expectedRevision"],
      [{ outcome: "edit", expectedRevision: 1 }, "editedArgs"],
      [{ outcome: "approve", expectedRevision: 1, editedArgs: { a: 1 } }, "editedArgs"],
      [{ outcome: "reject", expectedRevision: 1, scope: "run" }, "scope"],
      [{ outcome: "approve", expectedRevision: 1, scope: "forever" }, "scope"],
      [[], "(body)"],
    ];
    for (const [body, path] of cases) {
      const answer = await as[0]!.post(`/calls/${callId}/decision`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.issues.map((i: { path: string }) => i.path)).toContain(path);
    }
    // scope conversation on a run without a conversationId: refused after the vote was cast, rolled back
    const noConversation = await as[0]!.post(`/calls/${callId}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
      scope: "conversation",
    });
    expect(noConversation.status).toBe(400);
    expect(noConversation.body.error.issues[0].path).toBe("scope");
    expect(await writeSnapshot()).toEqual(before);
    expect((await agent.get(`/batches/${batch.id}`)).body.calls[0]).toMatchObject({
      status: "pending",
      votes: [],
    });
  });

  it("is 404 for unknown calls and for calls of queues the reviewer is not in; 403 for agent keys", async () => {
    const { agent, as } = await team();
    const other = await team();
    const { batch } = await pausedRun(agent, refundBatch());
    const before = await writeSnapshot();
    const unknown = await as[0]!.post(`/calls/00000000-0000-7000-8000-000000000000/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const foreign = await other.as[0]!.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toEqual(unknown.body.error);
    const byAgent = await agent.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(byAgent.status).toBe(403);
    expect(byAgent.body.error.code).toBe("forbidden");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("fails closed past the deadline, even before the sweeper settled the batch: 409 not_pending, nothing written", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, { ...calls(2), timeoutSecs: 1, onTimeout: "reject" });
    await new Promise((r) =>
      setTimeout(r, Math.max(0, Date.parse(batch.expiresAt) - Date.now()) + 50),
    );
    const before = await writeSnapshot();
    const late = await as[0]!.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("not_pending");
    expect(late.body.error.current.id).toBe(batch.calls[0].id);
    const lateBatch = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: Object.fromEntries(batch.calls.map((c: { id: string }) => [c.id, 1])),
    });
    expect(lateBatch.status).toBe(409);
    expect(lateBatch.body.error.code).toBe("not_pending");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("with separation of duties, the agent's owner may not decide its calls (403)", async () => {
    const queue = await makeQueue({ separationOfDuties: true });
    const [owner, colleague] = await makeReviewers(2, queue.name);
    const key = await makeAgentKey({ queues: [queue.name], ownerEmail: owner!.email });
    const { batch } = await pausedRun(apiClient(server.baseUrl, key.key), refundBatch());
    const own = await apiClient(server.baseUrl, owner!.token).post(
      `/calls/${batch.calls[0].id}/decision`,
      { outcome: "approve", expectedRevision: 1 },
    );
    expect(own.status).toBe(403);
    expect(own.body.error.code).toBe("forbidden");
    const other = await apiClient(server.baseUrl, colleague!.token).post(
      `/calls/${batch.calls[0].id}/decision`,
      { outcome: "approve", expectedRevision: 1 },
    );
    expect(other.status).toBe(200);
  });
});

describe("POST /batches/{batchId}/decision", () => {
  const revisions = (batch: { calls: { id: string; revision: number }[] }) =>
    Object.fromEntries(batch.calls.map((c) => [c.id, c.revision]));

  it("approves every call at once", async () => {
    const { agent, as, reviewer } = await team();
    const { run, batch } = await pausedRun(agent, calls(3));
    const answer = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(batch),
      reason: "fine",
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: batch.id, status: "decided", outcome: "approved" });
    for (const call of answer.body.calls) {
      expect(call).toMatchObject({
        status: "approved",
        decision: { source: "reviewer", by: { id: reviewer.id }, reason: "fine" },
      });
    }
    expect((await agent.get(`/runs/${run.id}`)).body.status).toBe("ready");
  });

  it("rejects every call at once", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, calls(2));
    const answer = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "reject",
      expectedRevisions: revisions(batch),
      reason: "no",
    });
    expect(answer.body).toMatchObject({ status: "decided", outcome: "rejected" });
    expect(answer.body.calls.map((c: { status: string }) => c.status)).toEqual([
      "rejected",
      "rejected",
    ]);
  });

  it("is all or nothing: one settled call makes it 409 and the others stay pending", async () => {
    const { agent, as } = await team({ reviewers: 2 });
    const { batch } = await pausedRun(agent, calls(3));
    // the last call is settled, so the first two would be written before the conflict shows
    const last = batch.calls[2];
    await as[1]!.post(`/calls/${last.id}/decision`, { outcome: "reject", expectedRevision: 1 });
    const before = await writeSnapshot();
    const rowsBefore = await rowsOf(batch.runId);

    const answer = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(batch),
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("already_decided");
    expect(answer.body.error.callId).toBe(last.id);
    expect(answer.body.error.current.id).toBe(batch.id);
    expect(answer.body.error.current.calls.map((c: { status: string }) => c.status)).toEqual([
      "pending",
      "pending",
      "rejected",
    ]);
    expect(await writeSnapshot()).toEqual(before);
    expect(await rowsOf(batch.runId)).toEqual(rowsBefore);
    const now = (await agent.get(`/batches/${batch.id}`)).body;
    expect(
      now.calls.map((c: { status: string; votes: unknown[] }) => [c.status, c.votes.length]),
    ).toEqual([
      ["pending", 0],
      ["pending", 0],
      ["rejected", 1],
    ]);
  });

  it("is 409 stale_revision when any call moved past the revision reviewed, and changes nothing", async () => {
    const { agent, as } = await team({ requiredApprovals: 2, reviewers: 2 });
    const { batch } = await pausedRun(agent, calls(3));
    const middle = batch.calls[1];
    await as[1]!.post(`/calls/${middle.id}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { orderId: "A-1", amount: 1 },
    });
    const before = await writeSnapshot();
    const answer = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(batch),
    });
    expect(answer.status).toBe(409);
    expect(answer.body.error.code).toBe("stale_revision");
    expect(answer.body.error.callId).toBe(middle.id);
    expect(answer.body.error.current.calls[1].revision).toBe(2);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("with quorum 2 counts one vote per call until a second reviewer decides", async () => {
    const { agent, as } = await team({ requiredApprovals: 2, reviewers: 2 });
    const { batch } = await pausedRun(agent, calls(2));
    const first = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(batch),
    });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe("pending");
    expect(first.body.calls.map((c: { votes: unknown[] }) => c.votes.length)).toEqual([1, 1]);
    const again = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(batch),
    });
    expect(again.status).toBe(409);
    const second = await as[1]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(batch),
    });
    expect(second.body).toMatchObject({ status: "decided", outcome: "approved" });
  });

  it("is 409 for a settled batch: already_decided when decided, not_pending when cancelled", async () => {
    const { agent, as } = await team();
    const decided = (await pausedRun(agent, calls(1))).batch;
    await as[0]!.post(`/batches/${decided.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(decided),
    });
    const again = await as[0]!.post(`/batches/${decided.id}/decision`, {
      outcome: "reject",
      expectedRevisions: revisions(decided),
    });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("already_decided");
    expect(again.body.error.current).toMatchObject({
      id: decided.id,
      status: "decided",
      outcome: "approved",
    });

    const cancelled = (await pausedRun(agent, calls(1))).batch;
    await agent.post(`/batches/${cancelled.id}/cancel`, {});
    const late = await as[0]!.post(`/batches/${cancelled.id}/decision`, {
      outcome: "approve",
      expectedRevisions: revisions(cancelled),
    });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("not_pending");
  });

  it("needs expectedRevisions for every call and only those (400 with issues), writing nothing", async () => {
    const { agent, as } = await team();
    const { batch } = await pausedRun(agent, calls(2));
    const before = await writeSnapshot();
    const [a, b] = batch.calls;
    const missing = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: { [a.id]: 1 },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe("invalid_request");
    expect(missing.body.error.issues).toEqual([
      { path: `expectedRevisions.${b.id}`, message: "missing" },
    ]);
    const extra = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "approve",
      expectedRevisions: { [a.id]: 1, [b.id]: 1, nope: 1 },
    });
    expect(extra.status).toBe(400);
    expect(extra.body.error.issues).toEqual([
      { path: "expectedRevisions.nope", message: "not a call of this batch" },
    ]);
    const edit = await as[0]!.post(`/batches/${batch.id}/decision`, {
      outcome: "edit",
      expectedRevisions: { [a.id]: 1, [b.id]: 1 },
    });
    expect(edit.status).toBe(400);
    expect(edit.body.error.issues[0].path).toBe("outcome");
    const noRevisions = await as[0]!.post(`/batches/${batch.id}/decision`, { outcome: "approve" });
    expect(noRevisions.body.error.issues[0].path).toBe("expectedRevisions");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("is 404 outside the reviewer's queues or for unknown ids, 403 for agent keys", async () => {
    const { agent, as } = await team();
    const other = await team();
    const { batch } = await pausedRun(agent, calls(1));
    const body = { outcome: "approve", expectedRevisions: revisions(batch) };
    const before = await writeSnapshot();
    const foreign = await other.as[0]!.post(`/batches/${batch.id}/decision`, body);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("not_found");
    expect(
      (await as[0]!.post(`/batches/00000000-0000-7000-8000-000000000000/decision`, body)).status,
    ).toBe(404);
    const byAgent = await agent.post(`/batches/${batch.id}/decision`, body);
    expect(byAgent.status).toBe(403);
    expect(byAgent.body.error.code).toBe("forbidden");
    expect(await writeSnapshot()).toEqual(before);
  });
});
