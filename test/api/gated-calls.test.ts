import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { makeQuickTeam, rowsOf, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// The MCP gateway's one-request path (lib/gated-calls): a call recorded and answered at once, a
// decision used once, outcomes reported once, and an identical call picking up a decision nobody
// used — across runs (a restarted gateway), never across gateways or agents.

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("gated-calls");
}, 60_000);
afterAll(async () => {
  await server?.stop();
});

async function setup() {
  const t = await makeQuickTeam();
  const lead = await makeReviewer({ queues: [{ name: t.queue.name, role: "lead" }] });
  const agentApi = apiClient(server.baseUrl, t.agent.key);
  const reviewerApi = apiClient(server.baseUrl, t.reviewer.token);
  const leadApi = apiClient(server.baseUrl, lead.token);
  const session = async () => {
    const run = await agentApi.post("/runs", { metadata: { via: "test" } });
    expect(run.status).toBe(201);
    return run.body.id as string;
  };
  return { ...t, agentApi, reviewerApi, leadApi, session };
}

const writeCall = (args: Record<string, unknown>, gateway = "filesystem") => ({
  gateway,
  toolCallId: `write-${Math.random().toString(36).slice(2)}`,
  toolName: "write_file",
  args,
});

const eventsOf = (runId: string, type: string) =>
  getDb()
    .select()
    .from(events)
    .where(and(eq(events.runId, runId), eq(events.type, type)));

async function approve(reviewerApi: ApiClient, call: { id: string; revision: number }) {
  const decided = await reviewerApi.post(`/calls/${call.id}/decision`, {
    outcome: "approve",
    expectedRevision: call.revision,
  });
  expect(decided.status, JSON.stringify(decided.body)).toBe(200);
}

describe("POST /runs/{runId}/gated-calls", () => {
  it("answers allow and deny at once, used at once, and the run stays running", async () => {
    const { agentApi, leadApi, queue, session } = await setup();
    for (const rule of [
      { name: "reads", effect: "allow", toolPattern: "read_*" },
      { name: "no moves", effect: "deny", toolPattern: "filesystem.move_*", reason: "never" },
    ])
      expect((await leadApi.post("/policy-rules", { queue: queue.name, ...rule })).status).toBe(
        201,
      );
    const runId = await session();
    const read = await agentApi.post(`/runs/${runId}/gated-calls`, {
      ...writeCall({ path: "a" }),
      toolName: "read_file",
    });
    expect(read.status).toBe(201);
    expect(read.body).toMatchObject({ decision: "allow", pickedUp: false });
    const move = await agentApi.post(`/runs/${runId}/gated-calls`, {
      ...writeCall({ from: "a", to: "b" }),
      toolName: "move_file",
    });
    expect(move.body.decision).toBe("deny");
    expect(move.body.batch.calls[0].decision.reason).toMatch(/never/);
    // an allowed call's decision was used at creation: there is nothing left to use
    const use = await agentApi.post(`/runs/${runId}/gated-calls/${read.body.callId}/use`, {});
    expect(use.status).toBe(409);
    expect(use.body.error.code).toBe("already_claimed");
    expect((await rowsOf(runId)).run?.status).toBe("running");
  });

  it("a call waiting for a person holds up no other call of the run", async () => {
    const { agentApi, leadApi, queue, session } = await setup();
    await leadApi.post("/policy-rules", {
      queue: queue.name,
      name: "reads",
      effect: "allow",
      toolPattern: "read_*",
    });
    const runId = await session();
    const asked = await agentApi.post(`/runs/${runId}/gated-calls`, writeCall({ path: "w" }));
    expect(asked.body.decision).toBe("ask");
    const asked2 = await agentApi.post(`/runs/${runId}/gated-calls`, writeCall({ path: "w2" }));
    expect(asked2.body.decision).toBe("ask");
    const read = await agentApi.post(`/runs/${runId}/gated-calls`, {
      ...writeCall({ path: "r" }),
      toolName: "read_file",
    });
    expect(read.body.decision).toBe("allow");
  });

  it("a decision is used once: used, replayed, picked up by the identical call of a later run, refused for a changed argument", async () => {
    const { agentApi, reviewerApi, session } = await setup();
    const first = await session();
    const asked = await agentApi.post(
      `/runs/${first}/gated-calls`,
      writeCall({ path: "x", content: "1" }),
    );
    expect(asked.body.decision).toBe("ask");
    const call = asked.body.batch.calls[0];
    // still waiting: nothing to use yet
    const early = await agentApi.post(`/runs/${first}/gated-calls/${call.id}/use`, {});
    expect(early.body.error.code).toBe("not_ready");
    // the identical call (keys in another order) waits on the same card rather than a new one
    const again = await agentApi.post(
      `/runs/${first}/gated-calls`,
      writeCall({ content: "1", path: "x" }),
    );
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ decision: "ask", pickedUp: true, callId: call.id });
    await approve(reviewerApi, call);

    // a later run (a restarted gateway) picks the decision up with the identical call, once
    const later = await session();
    const changed = await agentApi.post(
      `/runs/${later}/gated-calls`,
      writeCall({ path: "x", content: "2" }),
    );
    expect(changed.body).toMatchObject({ decision: "ask", pickedUp: false });
    const picked = await agentApi.post(
      `/runs/${later}/gated-calls`,
      writeCall({ path: "x", content: "1" }),
    );
    expect(picked.status).toBe(200);
    expect(picked.body).toMatchObject({ decision: "allow", pickedUp: true, callId: call.id });
    const replay = await agentApi.post(`/runs/${first}/gated-calls/${call.id}/use`, {});
    expect(replay.body.error.code).toBe("already_claimed");
    const thirdTime = await agentApi.post(
      `/runs/${later}/gated-calls`,
      writeCall({ path: "x", content: "1" }),
    );
    expect(thirdTime.body).toMatchObject({ decision: "ask", pickedUp: false });
    expect(thirdTime.body.callId).not.toBe(call.id);
    const used = await eventsOf(later, "call.used");
    expect(used).toHaveLength(1);
    expect(used[0]!.data).toMatchObject({ fromRunId: first, outcome: "approved" });

    // its outcome, reported twice (a retry after a lost answer), is recorded once
    const outcome = { callId: call.id, type: "tool.completed", result: { text: "ok" } };
    const reported = await agentApi.post(`/runs/${later}/gated-calls/outcomes`, {
      outcomes: [outcome],
    });
    expect(reported.status).toBe(201);
    expect(reported.body).toEqual({ recorded: [call.id], alreadyReported: [] });
    const retried = await agentApi.post(`/runs/${later}/gated-calls/outcomes`, {
      outcomes: [outcome],
    });
    expect(retried.body).toEqual({ recorded: [], alreadyReported: [call.id] });
    const completed = await eventsOf(later, "tool.completed");
    expect(completed).toHaveLength(1);
  });

  it("takes the outcomes of earlier calls along with a call: one write, recorded once", async () => {
    const { agentApi, leadApi, queue, session } = await setup();
    await leadApi.post("/policy-rules", {
      queue: queue.name,
      name: "reads",
      effect: "allow",
      toolPattern: "read_*",
    });
    const runId = await session();
    const read = (n: number, outcomes?: unknown[]) =>
      agentApi.post(`/runs/${runId}/gated-calls`, {
        ...writeCall({ path: `r${n}` }),
        toolName: "read_file",
        ...(outcomes && { outcomes }),
      });
    const first = await read(1);
    const outcome = { callId: first.body.callId, type: "tool.completed", result: { text: "1" } };
    const second = await read(2, [outcome, { callId: "nobodys", type: "tool.completed" }]);
    expect(second.body.decision).toBe("allow");
    // taken: recorded now, and the unknown call refused for good (the gateway drops both)
    expect(second.body.reported).toEqual([first.body.callId, "nobodys"]);
    const third = await read(3, [outcome]);
    expect(third.body.reported).toEqual([first.body.callId]);
    expect(await eventsOf(runId, "tool.completed")).toHaveLength(1);
  });

  it("a deny rule in force wins over an earlier approval nobody used", async () => {
    const { agentApi, reviewerApi, leadApi, queue, session } = await setup();
    const first = await session();
    const asked = await agentApi.post(`/runs/${first}/gated-calls`, writeCall({ path: "d" }));
    await approve(reviewerApi, asked.body.batch.calls[0]);
    await leadApi.post("/policy-rules", {
      queue: queue.name,
      name: "frozen",
      effect: "deny",
      toolPattern: "write_file",
      reason: "change freeze",
    });
    const later = await session();
    const refused = await agentApi.post(`/runs/${later}/gated-calls`, writeCall({ path: "d" }));
    expect(refused.body).toMatchObject({ decision: "deny", pickedUp: false });
  });

  it("a deny rule in force wins over an earlier card still waiting for a reviewer", async () => {
    const { agentApi, leadApi, queue, session } = await setup();
    const first = await session();
    await agentApi.post(`/runs/${first}/gated-calls`, writeCall({ path: "w" }));
    await leadApi.post("/policy-rules", {
      queue: queue.name,
      name: "frozen-while-waiting",
      effect: "deny",
      toolPattern: "write_file",
      reason: "change freeze",
    });
    const later = await session();
    const refused = await agentApi.post(`/runs/${later}/gated-calls`, writeCall({ path: "w" }));
    expect(refused.body).toMatchObject({ decision: "deny", pickedUp: false });
  });

  it("never picks up another gateway's or another agent's decision, nor reports on them", async () => {
    const { agentApi, reviewerApi, queue, session } = await setup();
    const first = await session();
    const asked = await agentApi.post(`/runs/${first}/gated-calls`, writeCall({ path: "o" }));
    const call = asked.body.batch.calls[0];
    await approve(reviewerApi, call);
    const later = await session();
    const otherGateway = await agentApi.post(
      `/runs/${later}/gated-calls`,
      writeCall({ path: "o" }, "github"),
    );
    expect(otherGateway.body).toMatchObject({ decision: "ask", pickedUp: false });

    const peer = await makeAgentKey({ name: "Peer bot", queues: [queue.name] });
    const peerApi = apiClient(server.baseUrl, peer.key);
    const peerRun = (await peerApi.post("/runs", {})).body.id as string;
    const peerCall = await peerApi.post(`/runs/${peerRun}/gated-calls`, writeCall({ path: "o" }));
    expect(peerCall.body).toMatchObject({ decision: "ask", pickedUp: false });
    expect((await peerApi.post(`/runs/${peerRun}/gated-calls/${call.id}/use`, {})).status).toBe(
      404,
    );
    const peerReport = await peerApi.post(`/runs/${peerRun}/gated-calls/outcomes`, {
      outcomes: [{ callId: call.id, type: "tool.completed" }],
    });
    expect(peerReport.status).toBe(404);
    // and a report on a call nobody used yet is refused
    const early = await agentApi.post(`/runs/${later}/gated-calls/outcomes`, {
      outcomes: [{ callId: call.id, type: "tool.completed" }],
    });
    expect(early.status).toBe(409);
  });

  it("a run that was paused the ordinary way takes no gated calls (409), and a finished one none (409)", async () => {
    const { agentApi, session } = await setup();
    const runId = await session();
    const paused = await agentApi.post(`/runs/${runId}/batches`, {
      calls: [{ toolCallId: "c1", toolName: "refund", args: {} }],
    });
    expect(paused.status).toBe(201);
    const refused = await agentApi.post(`/runs/${runId}/gated-calls`, writeCall({}));
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe("not_ready");
    const done = await session();
    await agentApi.post(`/runs/${done}/complete`, { outcome: "completed" });
    const late = await agentApi.post(`/runs/${done}/gated-calls`, writeCall({}));
    expect(late.body.error.code).toBe("run_terminal");
  });
});
