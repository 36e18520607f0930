import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gate, type GateRejection, type RunSession } from "@/lib/sdk/index";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import { decideTool, eventsOf, runCount, sdkTeam, type SdkTeam } from "./fixtures";

// gate() puts a person between the model and a tool: approved calls run (with the reviewer's
// edits), anything else comes back as a GateRejection the model can read, and the tool never runs.

let server: TestServer;
let team: SdkTeam;
const sessions: RunSession[] = [];

beforeAll(async () => {
  server = await startApiServer("sdk-gate");
  team = await sdkTeam(server.baseUrl);
}, 60_000);
afterAll(async () => {
  sessions.forEach((session) => session.release());
  await server?.stop();
});

type Refund = { orderId: string; amount: number };

/** A refund tool that records what it was called with. */
function refundTool() {
  const calls: Refund[] = [];
  const tool = async (args: Refund) => {
    calls.push(args);
    return { refunded: args.amount, orderId: args.orderId };
  };
  return { tool, calls };
}

describe("gate", () => {
  it("runs an approved call with the agent's args and reports its result", async () => {
    const { tool, calls } = refundTool();
    const refund = gate(tool, {
      client: team.client,
      toolName: "refund_approve",
      summary: (args) => `Refund ${args.amount} on ${args.orderId}`,
      risks: ["Money leaves the company"],
      costEstimate: (args) => args.amount,
      revert: (args) => ({ chargeBack: args.orderId }),
    });
    const answer = refund({ orderId: "G-1", amount: 40 });
    const decided = await decideTool(team, "refund_approve", "approve");
    expect(decided.call).toMatchObject({
      summary: "Refund 40 on G-1",
      risks: ["Money leaves the company"],
      costEstimate: 40,
    });
    expect(await answer).toEqual({ refunded: 40, orderId: "G-1" });
    expect(calls).toEqual([{ orderId: "G-1", amount: 40 }]);

    // A run of its own, completed, with the result reported (and its revert data kept).
    const run = await team.client.getRun(decided.batch.runId);
    expect(run.status).toBe("completed");
    const [completed] = await eventsOf(run.id, "tool.completed");
    expect(completed!.data).toMatchObject({
      toolCallId: decided.call.toolCallId,
      result: { refunded: 40, orderId: "G-1" },
      revert: { chargeBack: "G-1" },
    });
  });

  it("runs an edited call with the reviewer's args, never the agent's", async () => {
    const { tool, calls } = refundTool();
    const refund = gate(tool, { client: team.client, toolName: "refund_edit" });
    const answer = refund({ orderId: "G-2", amount: 500 });
    await decideTool(team, "refund_edit", "edit", {
      editedArgs: { orderId: "G-2", amount: 50 },
      reason: "half is plenty",
    });
    expect(await answer).toEqual({ refunded: 50, orderId: "G-2" });
    expect(calls).toEqual([{ orderId: "G-2", amount: 50 }]);
  });

  it("does not run a rejected call and answers a GateRejection instead of throwing", async () => {
    const { tool, calls } = refundTool();
    const refund = gate(tool, { client: team.client, toolName: "refund_reject" });
    const answer = refund({ orderId: "G-3", amount: 900 });
    const decided = await decideTool(team, "refund_reject", "reject", {
      reason: "Wrong customer.",
    });
    const rejection = (await answer) as GateRejection;
    expect(calls).toEqual([]);
    expect(rejection).toMatchObject({
      rejected: true,
      reason: "Wrong customer.",
      decidedBy: { name: team.reviewerName },
      source: "reviewer",
      blocked: false,
      toolName: "refund_reject",
      batchId: decided.batch.id,
      message: "The reviewer rejected this call: Wrong customer. The tool was not run.",
    });
    expect((await team.client.getRun(rejection.runId)).status).toBe("completed");
  });

  it("answers a policy block at once, and a deadline's rejection, without running the tool", async () => {
    const lead = await makeReviewer({
      name: "Lee Lead",
      queues: [{ name: team.queue.name, role: "lead" }],
    });
    const rule = await apiClient(server.baseUrl, lead.token).post("/policy-rules", {
      name: "No dropping tables",
      queue: team.queue.id,
      effect: "deny",
      toolPattern: "drop_table",
      reason: "Tables are never dropped by agents",
    });
    expect(rule.status).toBe(201);
    let ran = 0;
    const tool = async () => ++ran;
    const dropTable = gate(tool, { client: team.client, toolName: "drop_table" });
    expect(await dropTable({ table: "orders" })).toMatchObject({
      rejected: true,
      source: "policy",
      blocked: true,
      decidedBy: null,
      reason: expect.stringContaining("Tables are never dropped by agents"),
      // The server words a block for the model; the gate adds that the tool did not run.
      message: expect.stringMatching(/Tables are never dropped by agents.*The tool was not run\.$/),
    });

    const slow = gate(tool, { client: team.client, toolName: "slow_tool", timeoutSecs: 1 });
    expect(await slow({})).toMatchObject({ rejected: true, source: "timeout", decidedBy: null });
    expect(ran).toBe(0);
  });

  it("withdraws the request when it stops waiting, and says so to the model", async () => {
    let ran = 0;
    const impatient = gate(async () => ++ran, {
      client: team.client,
      toolName: "impatient_tool",
      wait: { timeoutMs: 400 },
    });
    const answer = (await impatient({})) as GateRejection;
    expect(answer).toMatchObject({ rejected: true, source: "cancelled", decidedBy: null });
    expect(answer.message).toMatch(/withdrawn.*The tool was not run\.$/);
    expect(ran).toBe(0);
    expect((await team.client.getBatch(answer.batchId)).status).toBe("cancelled");
  });

  it("runs calls without approval when needsApproval says so, creating no run", async () => {
    const { tool, calls } = refundTool();
    const refund = gate(tool, {
      client: team.client,
      toolName: "refund_small",
      needsApproval: async (args) => args.amount > 100,
    });
    const before = await runCount(team.agentId);
    expect(await refund({ orderId: "G-4", amount: 10 })).toEqual({ refunded: 10, orderId: "G-4" });
    expect(calls).toHaveLength(1);
    expect(await runCount(team.agentId)).toBe(before);
  });

  it("drives many gated calls through one run, one pause at a time, even when called in parallel", async () => {
    const session = await team.client.startRun({ externalId: "agent-loop-1" });
    sessions.push(session);
    const { tool, calls } = refundTool();
    const refund = gate(tool, { client: team.client, toolName: "refund_loop", run: session });
    const email = gate(async (args: { to: string }) => `sent to ${args.to}`, {
      client: team.client,
      toolName: "email_loop",
      run: () => session.runId,
    });

    const first = refund({ orderId: "L-1", amount: 1 });
    await decideTool(team, "refund_loop", "approve");
    expect(await first).toEqual({ refunded: 1, orderId: "L-1" });
    expect(session.claim?.state).toBe("held");

    // The model asks for two tools at once: they are reviewed one after the other.
    const both = Promise.all([
      refund({ orderId: "L-2", amount: 2 }),
      email({ to: "ana@example.com" }),
    ]);
    await decideTool(team, "refund_loop", "reject", { reason: "not this one" });
    await decideTool(team, "email_loop", "approve");
    const [second, mailed] = await both;
    expect((second as GateRejection).rejected).toBe(true);
    expect(mailed).toBe("sent to ana@example.com");
    expect(calls).toEqual([{ orderId: "L-1", amount: 1 }]);

    const run = await team.client.getRun(session.runId);
    expect(run.batches).toHaveLength(3);
    expect(run.status).toBe("resuming");
    expect((await session.complete({ answer: "done" })).status).toBe("completed");
    expect((await eventsOf(session.runId, "tool.completed")).map((e) => e.data.result)).toEqual([
      { refunded: 1, orderId: "L-1" },
      "sent to ana@example.com",
    ]);
  });
});
