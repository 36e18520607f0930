import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { pausedRun, startApiServer, writeSnapshot } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { openSse } from "@/test/support/sse";
import { startServer, type TestServer } from "@/test/support/server";

// Policy rules decide at batch creation which calls a reviewer sees at all: allowed calls are
// approved at once, blocked ones rejected at once and never shown to a reviewer; agent modes
// switch the gate; runs created with requirePlanApproval take actions only after a plan.

let server: TestServer;
let admin: ApiClient;

beforeAll(async () => {
  server = await startApiServer("policies");
  const home = await makeQueue();
  const person = await makeReviewer({
    name: "Ada Admin",
    queues: [{ name: home.name, role: "admin" }],
  });
  admin = apiClient(server.baseUrl, person.token);
}, 60_000);
afterAll(() => server?.stop());

/** A fresh queue with a lead, a reviewer and an agent key, so tests do not share rules. */
async function team() {
  const queue = await makeQueue();
  const lead = await makeReviewer({
    name: "Lee Lead",
    queues: [{ name: queue.name, role: "lead" }],
  });
  const reviewer = await makeReviewer({ name: "Rae Reviewer", queues: [{ name: queue.name }] });
  const key = await makeAgentKey({ queues: [queue.name] });
  return {
    queue,
    key,
    lead: apiClient(server.baseUrl, lead.token),
    reviewer: apiClient(server.baseUrl, reviewer.token),
    reviewerToken: reviewer.token,
    agent: apiClient(server.baseUrl, key.key),
  };
}

const call = (
  toolName: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) => ({
  toolCallId: `t-${Math.random().toString(36).slice(2)}`,
  toolName,
  args,
  ...extra,
});

/** The team's example: scratch writes fine, output writes reviewed, output deletes blocked. */
async function fileRules(lead: ApiClient, queue: string) {
  const rules = [
    {
      name: "Scratch writes",
      effect: "allow",
      toolPattern: "write_file",
      argPredicates: [{ path: "path", op: "prefix", value: "/scratch/" }],
    },
    {
      name: "Output writes",
      effect: "ask",
      toolPattern: "write_file",
      argPredicates: [{ path: "path", op: "prefix", value: "/output/" }],
    },
    {
      name: "Output deletes",
      effect: "deny",
      toolPattern: "delete_*",
      argPredicates: [{ path: "path", op: "prefix", value: "/output/" }],
      reason: "Output is append-only.",
    },
  ];
  const created = [];
  for (const rule of rules) {
    const answer = await lead.post("/policy-rules", { ...rule, queue });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    created.push(answer.body);
  }
  return created;
}

async function eventsOfRun(runId: string) {
  return getDb().select().from(events).where(eq(events.runId, runId));
}

describe("policy rules: who writes them", () => {
  it("leads write their queue's rules, admins the global ones; others are refused and nothing is written", async () => {
    const { queue, lead, reviewer, agent } = await team();
    const other = await makeQueue();
    const body = { name: "x", effect: "allow", toolPattern: "read_*" };
    const before = await writeSnapshot();
    expect((await reviewer.post("/policy-rules", { ...body, queue: queue.id })).status).toBe(403);
    expect((await lead.post("/policy-rules", body)).status).toBe(403); // global: admins only
    expect((await lead.post("/policy-rules", { ...body, queue: other.id })).status).toBe(404);
    expect((await agent.post("/policy-rules", { ...body, queue: queue.id })).status).toBe(403);
    expect((await apiClient(server.baseUrl).post("/policy-rules", body)).status).toBe(401);
    for (const bad of [
      { ...body, effect: "maybe" },
      { ...body, name: "" },
      { ...body, argPredicates: [{ path: "a b", op: "equals", value: 1 }] },
      { ...body, argPredicates: [{ path: "path", op: "prefix", value: 3 }] },
      { ...body, costAbove: -1 },
      { ...body, surprise: true },
    ]) {
      const answer = await lead.post("/policy-rules", { ...bad, queue: queue.id });
      expect(answer.status, JSON.stringify(bad)).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
    }
    expect(await writeSnapshot()).toEqual(before);

    const created = await lead.post("/policy-rules", { ...body, queue: queue.name });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      queue: { id: queue.id },
      effect: "allow",
      canEdit: true,
      enabled: true,
    });
    const clash = await lead.post("/policy-rules", { ...body, queue: queue.id });
    expect(clash.status).toBe(409);

    // Reviewers read their queue's rules; another queue's rules answer as missing.
    const listed = await reviewer.get(`/policy-rules?queue=${queue.id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.rules.map((r: { id: string }) => r.id)).toContain(created.body.id);
    expect(listed.body.rules.find((r: { id: string }) => r.id === created.body.id).canEdit).toBe(
      false,
    );
    const outsider = apiClient(
      server.baseUrl,
      (await makeReviewer({ queues: [{ name: other.name }] })).token,
    );
    expect((await outsider.get(`/policy-rules?queue=${queue.id}`)).status).toBe(404);
    expect(
      (await outsider.raw(`/policy-rules/${created.body.id}`, { method: "DELETE" })).status,
    ).toBe(404);
    expect(
      (await reviewer.raw(`/policy-rules/${created.body.id}`, { method: "DELETE" })).status,
    ).toBe(403);

    const global = await admin.post("/policy-rules", { ...body, name: `global-${queue.id}` });
    expect(global.status).toBe(201);
    expect(global.body.queue).toBeNull();
    await admin.raw(`/policy-rules/${global.body.id}`, { method: "DELETE" });
  });
});

describe("policy at batch creation", () => {
  it("allows, asks and blocks as the rules say; the run moves on when nothing is left to decide", async () => {
    const { queue, lead, agent } = await team();
    await fileRules(lead, queue.id);

    const scratch = await pausedRun(agent, {
      calls: [call("write_file", { path: "/scratch/a.txt" })],
    });
    expect(scratch.run.status).toBe("ready");
    expect(scratch.batch).toMatchObject({ status: "decided", outcome: "approved" });
    expect(scratch.batch.calls[0].decision).toMatchObject({
      outcome: "approved",
      source: "policy",
      by: null,
      policy: {
        effect: "allow",
        rule: { name: "Scratch writes", queueId: queue.id },
        agentMode: "ask",
        blocked: false,
      },
    });

    const output = await pausedRun(agent, {
      calls: [call("write_file", { path: "/output/a.txt" })],
    });
    expect(output.run.status).toBe("waiting_approval");
    expect(output.batch.calls[0]).toMatchObject({ status: "pending", decision: null });

    const deletion = await pausedRun(agent, {
      calls: [call("delete_file", { path: "/output/a.txt" })],
    });
    expect(deletion.run.status).toBe("ready");
    expect(deletion.batch).toMatchObject({ status: "decided", outcome: "rejected" });
    expect(deletion.batch.calls[0]).toMatchObject({
      status: "rejected",
      decision: {
        outcome: "rejected",
        source: "policy",
        policy: { effect: "deny", rule: { name: "Output deletes" }, blocked: true },
      },
    });
    expect(deletion.batch.calls[0].decision.reason).toContain("Output is append-only.");

    // A path that climbs out of /scratch/ is judged where it lands.
    const climb = await pausedRun(agent, {
      calls: [call("delete_file", { path: "/scratch/../output/b" })],
    });
    expect(climb.batch.calls[0].decision.policy.blocked).toBe(true);
  });

  it("never shows a blocked call to reviewers to decide: not in the queue, the batch, the run or any stream (History lists it as a decision)", async () => {
    const { queue, lead, reviewer, reviewerToken, agent } = await team();
    await fileRules(lead, queue.id);
    const before = (await writeSnapshot()).lastSeq;
    const live = await openSse(`${server.baseUrl}/api/v1/stream`, { token: reviewerToken });
    const runLive = { value: null as Awaited<ReturnType<typeof openSse>> | null };

    // one call blocked, one for a reviewer, in one batch
    const mixed = await pausedRun(agent, {
      calls: [
        call("delete_file", { path: "/output/secret.txt" }),
        call("write_file", { path: "/output/report.md" }),
      ],
    });
    expect(mixed.batch.calls.map((c: { status: string }) => c.status)).toEqual([
      "rejected",
      "pending",
    ]);
    // a batch blocked whole
    const blocked = await pausedRun(agent, { calls: [call("delete_dir", { path: "/output/" })] });
    expect(blocked.batch.status).toBe("decided");

    runLive.value = await openSse(`${server.baseUrl}/api/v1/runs/${mixed.run.id}/stream`, {
      token: reviewerToken,
      lastEventId: 0,
    });
    const blockedCallId = mixed.batch.calls[0].id;
    const seen = await reviewer.get(`/batches/${mixed.batch.id}`);
    expect(seen.body.calls.map((c: { id: string }) => c.id)).toEqual([mixed.batch.calls[1].id]);
    expect((await reviewer.get(`/batches/${blocked.batch.id}`)).status).toBe(404);
    // The run itself is the queue's to see (it started there); the blocked batch is not.
    expect((await reviewer.get(`/runs/${blocked.run.id}`)).body.batches).toEqual([]);
    expect(
      (
        await reviewer.post(`/calls/${blockedCallId}/decision`, {
          outcome: "approve",
          expectedRevision: 1,
        })
      ).status,
    ).toBe(404);
    const queued = await reviewer.get(`/queue?status=all&queue=${queue.id}`);
    const queuedIds = queued.body.batches.map((b: { id: string }) => b.id);
    expect(queuedIds).toContain(mixed.batch.id);
    expect(queuedIds).not.toContain(blocked.batch.id);
    // History is the audit trail: a block is a decision there (source policy), not a card to decide.
    const history = await reviewer.get(`/history?queue=${queue.id}&source=policy`);
    expect(history.body.batches.map((b: { id: string }) => b.id)).toContain(blocked.batch.id);
    const run = await reviewer.get(`/runs/${mixed.run.id}`);
    expect(JSON.stringify(run.body)).not.toContain(blockedCallId);

    // The agent sees all of it.
    const asAgent = await agent.get(`/batches/${mixed.batch.id}`);
    expect(asAgent.body.calls).toHaveLength(2);
    expect((await agent.get(`/batches/${blocked.batch.id}`)).status).toBe(200);

    // Decide the visible call so the streams carry the settlement too, then compare.
    const decided = await reviewer.post(`/calls/${mixed.batch.calls[1].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(decided.status).toBe(200);
    expect(decided.body.batch.calls).toHaveLength(1);
    await live.waitFor((m) => m.event === "batch.decided" && m.data.batchId === mixed.batch.id);
    await runLive.value.waitFor((m) => m.event === "batch.decided");
    const replay = await openSse(`${server.baseUrl}/api/v1/stream`, {
      token: reviewerToken,
      lastEventId: before,
    });
    await replay.waitFor((m) => m.event === "batch.decided" && m.data.batchId === mixed.batch.id);
    for (const stream of [live, runLive.value, replay]) {
      const text = JSON.stringify(stream.messages);
      expect(text).not.toContain(blockedCallId);
      expect(text).not.toContain(blocked.batch.id);
      expect(stream.messages.some((m) => m.event === "call.blocked")).toBe(false);
      stream.close();
    }

    // The log keeps the block, as its own event, for the run.
    const logged = await getDb()
      .select()
      .from(events)
      .where(and(eq(events.callId, blockedCallId), eq(events.type, "call.blocked")));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ queueId: null, actorKind: "system" });
    expect(logged[0]!.data).toMatchObject({
      outcome: "rejected",
      source: "policy",
      policy: { blocked: true },
    });
  });

  it("records a block differently from a reviewer's rejection", async () => {
    const { queue, lead, reviewer, agent } = await team();
    await fileRules(lead, queue.id);
    const blocked = await pausedRun(agent, { calls: [call("delete_file", { path: "/output/x" })] });
    const asked = await pausedRun(agent, { calls: [call("delete_file", { path: "/tmp/x" })] });
    const rejected = await reviewer.post(`/calls/${asked.batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
      reason: "not today",
    });
    expect(rejected.status).toBe(200);
    const blockedEvents = (await eventsOfRun(blocked.run.id)).map((e) => e.type);
    const rejectedEvents = (await eventsOfRun(asked.run.id)).map((e) => e.type);
    expect(blockedEvents).toContain("call.blocked");
    expect(blockedEvents).not.toContain("call.decided");
    expect(rejectedEvents).toContain("call.decided");
    expect(rejectedEvents).not.toContain("call.blocked");
    expect(blocked.batch.calls[0].decision).toMatchObject({ source: "policy", by: null });
    expect(rejected.body.call.decision).toMatchObject({
      source: "reviewer",
      reason: "not today",
      policy: null,
    });
  });

  it("explains a call in the try box without writing anything", async () => {
    const { queue, lead, reviewer } = await team();
    await fileRules(lead, queue.id);
    const before = await writeSnapshot();
    const tried = await reviewer.post("/policy-rules/try", {
      queue: queue.id,
      call: { toolName: "delete_file", args: { path: "/output/a" } },
    });
    expect(tried.status).toBe(200);
    expect(tried.body).toMatchObject({
      outcome: "blocked",
      effect: "deny",
      rule: { name: "Output deletes" },
    });
    const deny = tried.body.checks.find(
      (c: { rule: { name: string } }) => c.rule.name === "Output deletes",
    );
    expect(deny.matched).toBe(true);
    expect(deny.conditions).toEqual([
      {
        condition: "tool delete_file matches delete_*",
        held: true,
        why: null,
      },
      {
        condition: 'path starts with "/output/"',
        held: true,
        why: 'path is "/output/a", which starts with "/output/"',
      },
    ]);
    const nothing = await reviewer.post("/policy-rules/try", {
      queue: queue.id,
      call: { toolName: "read_file", args: {} },
    });
    expect(nothing.body).toMatchObject({ outcome: "review", rule: null });
    expect(
      (await reviewer.post("/policy-rules/try", { queue: queue.id, call: { toolName: "x" } }))
        .status,
    ).toBe(400);
    expect(await writeSnapshot()).toEqual(before);
  });

  it("edits, disables and reorders rules; the next batch follows the new rules", async () => {
    const { queue, lead, agent } = await team();
    const [scratch] = await fileRules(lead, queue.id);
    const off = await lead.raw(`/policy-rules/${scratch.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    expect(off.status).toBe(200);
    const asked = await pausedRun(agent, { calls: [call("write_file", { path: "/scratch/a" })] });
    expect(asked.batch.calls[0].status).toBe("pending");
    const widened = await lead.raw(`/policy-rules/${scratch.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        enabled: true,
        argPredicates: [{ path: "path", op: "glob", value: "/scratch/*.txt" }],
      }),
    });
    expect(widened.status).toBe(200);
    expect(
      (await pausedRun(agent, { calls: [call("write_file", { path: "/scratch/a.txt" })] })).batch
        .status,
    ).toBe("decided");
    expect(
      (await pausedRun(agent, { calls: [call("write_file", { path: "/scratch/a.md" })] })).batch
        .status,
    ).toBe("pending");

    // Two allow rules alike: the one listed first is the one recorded.
    const twin = await lead.post("/policy-rules", {
      queue: queue.id,
      name: "Scratch twin",
      effect: "allow",
      toolPattern: "write_file",
      argPredicates: [{ path: "path", op: "glob", value: "/scratch/*.txt" }],
    });
    const first = await pausedRun(agent, {
      calls: [call("write_file", { path: "/scratch/b.txt" })],
    });
    expect(first.batch.calls[0].decision.policy.rule.name).toBe("Scratch writes");
    const moved = await lead.post(`/policy-rules/${twin.body.id}/move`, { to: 0 });
    expect(moved.status).toBe(200);
    const second = await pausedRun(agent, {
      calls: [call("write_file", { path: "/scratch/c.txt" })],
    });
    expect(second.batch.calls[0].decision.policy.rule.name).toBe("Scratch twin");
  });
});

describe("agent modes", () => {
  async function setMode(agentId: string, mode: string) {
    const answer = await admin.raw(`/agents/${agentId}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mode }),
    });
    return { status: answer.status, body: await answer.json().catch(() => null) };
  }

  it("only admins change a mode; ask, allow, deny and off do what they say", async () => {
    const { queue, lead, agent, key } = await team();
    await fileRules(lead, queue.id);
    const patch = await lead.raw(`/agents/${key.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ mode: "off" }),
    });
    expect(patch.status).toBe(403);
    expect((await setMode(key.id, "sometimes")).status).toBe(400);
    expect((await setMode("nope", "off")).status).toBe(404);
    // Leads see the keys of their queues (issue 14), but only admins set a mode.
    const leadsKeys = await lead.get("/agents");
    expect(leadsKeys.status).toBe(200);
    expect(leadsKeys.body.agents.map((a: { id: string }) => a.id)).toEqual([key.id]);

    const tryAll = async () => {
      const { batch } = await pausedRun(agent, {
        calls: [
          call("read_file", { path: "/a" }),
          call("write_file", { path: "/scratch/a" }),
          call("delete_file", { path: "/output/a" }),
        ],
      });
      return batch.calls.map(
        (c: { status: string; decision: { policy: { agentMode: string } | null } | null }) =>
          c.status,
      );
    };
    expect(await tryAll()).toEqual(["pending", "approved", "rejected"]);
    expect((await setMode(key.id, "allow")).body.mode).toBe("allow");
    expect(await tryAll()).toEqual(["approved", "approved", "rejected"]);
    await setMode(key.id, "deny");
    expect(await tryAll()).toEqual(["rejected", "approved", "rejected"]);
    const denied = await pausedRun(agent, { calls: [call("read_file", { path: "/b" })] });
    expect(denied.batch.calls[0].decision).toMatchObject({
      source: "policy",
      policy: { agentMode: "deny", blocked: false },
    });
    expect(denied.batch.calls[0].decision.reason).toMatch(/mode is deny/);
    await setMode(key.id, "off");
    expect(await tryAll()).toEqual(["approved", "approved", "approved"]);

    const listed = await admin.get("/agents");
    expect(listed.body.agents.find((a: { id: string }) => a.id === key.id)).toMatchObject({
      mode: "off",
      defaultQueue: { id: queue.id },
    });
    const changes = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "agent.mode_changed"));
    expect(changes.filter((e) => (e.data as { agentId: string }).agentId === key.id)).toHaveLength(
      3,
    );
  });
});

describe("plan approval", () => {
  it("refuses action batches until a plan of the run is approved; the reviewer may edit the plan's summary only", async () => {
    const { reviewer, agent } = await team();
    const before = await writeSnapshot();
    const refused = await agent.post("/runs", {
      requirePlanApproval: true,
      batch: { calls: [call("deploy", {})] },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("plan_required");
    expect(await writeSnapshot()).toEqual(before);

    const plan = {
      summary: "Migrate the orders table",
      rationale: "It is slow",
      resources: ["db/orders"],
      risks: ["downtime"],
      rollback: "restore the snapshot",
    };
    const { run, batch } = await pausedRun(
      agent,
      { kind: "plan", plan },
      { requirePlanApproval: true },
    );
    expect(run.requirePlanApproval).toBe(true);
    const claim = async () => (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;

    const planCall = batch.calls[0];
    const sneaky = await reviewer.post(`/calls/${planCall.id}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { ...plan, rollback: "none" },
    });
    expect(sneaky.status).toBe(400);
    const edited = await reviewer.post(`/calls/${planCall.id}/decision`, {
      outcome: "edit",
      expectedRevision: 1,
      editedArgs: { ...plan, summary: "Migrate the orders table at night" },
    });
    expect(edited.status).toBe(200);
    const decided = (await agent.get(`/batches/${batch.id}`)).body;
    expect(decided.outcome).toBe("approved");
    expect(decided.calls[0].decision.editedArgs.summary).toBe("Migrate the orders table at night");

    const lease = await claim();
    const action = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: lease.claimToken,
      calls: [call("deploy", {})],
    });
    expect(action.status).toBe(201);
  });

  it("a rejected plan keeps the run's actions refused", async () => {
    const { reviewer, agent } = await team();
    const { run, batch } = await pausedRun(
      agent,
      { kind: "plan", plan: { summary: "Drop the table" } },
      { requirePlanApproval: true },
    );
    await reviewer.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
      reason: "no",
    });
    const lease = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;
    const before = await writeSnapshot();
    const action = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: lease.claimToken,
      calls: [call("drop", {})],
    });
    expect(action.status).toBe(409);
    expect(action.body.error.code).toBe("plan_required");
    expect(await writeSnapshot()).toEqual(before);
    const again = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: lease.claimToken,
      kind: "plan",
      plan: { summary: "Archive the table" },
    });
    expect(again.status).toBe(201);
  });
});

describe("remembered approvals", () => {
  it("survive a restart of the server", async () => {
    const { key, reviewerToken } = await team();
    const args = { orderId: "R-1", amount: 9 };
    const before = apiClient(server.baseUrl, key.key);
    const { run, batch } = await pausedRun(before, { calls: [call("refund_order", args)] });
    const approved = await apiClient(server.baseUrl, reviewerToken).post(
      `/calls/${batch.calls[0].id}/decision`,
      { outcome: "approve", expectedRevision: 1, scope: "run" },
    );
    expect(approved.status).toBe(200);

    await server.stop();
    server = await startServer({ databaseUrl: process.env.DATABASE_URL! });
    const agent = apiClient(server.baseUrl, key.key);
    const lease = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;
    const next = await agent.post(`/runs/${run.id}/batches`, {
      claimToken: lease.claimToken,
      calls: [call("refund_order", { amount: 9, orderId: "R-1" })],
    });
    expect(next.status).toBe(201);
    expect(next.body).toMatchObject({ status: "decided", outcome: "approved" });
    expect(next.body.calls[0].decision).toMatchObject({ source: "memory", scope: "run" });
  });
});
