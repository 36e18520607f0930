import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, queues } from "@/db/schema";
import { pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import { startServer, type TestServer } from "@/test/support/server";

// onTimeout "escalate": at the deadline a batch moves to its queue's escalation queue, with that
// queue's deadline and quorum; with nowhere to go, or at the end of the chain, it is rejected.

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("escalation", { SWEEP_INTERVAL_MS: "100" });
}, 60_000);
afterAll(() => server?.stop());

async function escalatesTo(queueId: string, escalationQueueId: string | null) {
  await getDb().update(queues).set({ escalationQueueId }).where(eq(queues.id, queueId));
}

async function chain(options: { secondTimeoutSecs?: number; secondQuorum?: number } = {}) {
  const first = await makeQueue();
  const second = await makeQueue({
    defaultTimeoutSecs: options.secondTimeoutSecs ?? 3600,
    requiredApprovals: options.secondQuorum ?? 1,
  });
  await escalatesTo(first.id, second.id);
  const frontline = await makeReviewer({ name: "Fran Frontline", queues: [{ name: first.name }] });
  const senior = await makeReviewer({ name: "Sid Senior", queues: [{ name: second.name }] });
  const agent = await makeAgentKey({ queues: [first.name] });
  return {
    first,
    second,
    agentKey: agent.key,
    seniorToken: senior.token,
    agent: apiClient(server.baseUrl, agent.key),
    frontline: apiClient(server.baseUrl, frontline.token),
    senior: apiClient(server.baseUrl, senior.token),
  };
}

async function settledOrMoved(agent: ApiClient, batchId: string, fromQueue: string) {
  return waitUntil(
    async () => {
      const { body } = await agent.get(`/batches/${batchId}`);
      return body.status !== "pending" || body.queue.id !== fromQueue ? body : null;
    },
    { timeoutMs: 10_000, intervalMs: 50, what: "the batch to escalate or settle" },
  );
}

describe("onTimeout: escalate", () => {
  it("moves the batch to the escalation queue with its deadline and quorum; the old queue loses it", async () => {
    const team = await chain({ secondTimeoutSecs: 600, secondQuorum: 2 });
    const { run, batch } = await pausedRun(
      team.agent,
      refundBatch({ timeoutSecs: 1, onTimeout: "escalate" }),
    );
    const moved = await settledOrMoved(team.agent, batch.id, team.first.id);
    expect(moved).toMatchObject({ status: "pending", queue: { id: team.second.id } });
    const newDeadline = Date.parse(moved.expiresAt) - Date.now();
    expect(newDeadline).toBeGreaterThan(590_000);
    expect(newDeadline).toBeLessThanOrEqual(600_000);
    expect(moved.calls[0].requiredApprovals).toBe(2);

    const seniorQueue = await team.senior.get("/queue");
    expect(seniorQueue.body.batches.map((b: { id: string }) => b.id)).toEqual([batch.id]);
    expect((await team.frontline.get("/queue")).body.batches).toEqual([]);
    // The frontline reviewer can no longer decide it; the senior one can.
    const late = await team.frontline.post(`/calls/${batch.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
    });
    expect(late.status).toBe(404);

    const escalations = await getDb().select().from(events).where(eq(events.batchId, batch.id));
    const escalated = escalations.filter((e) => e.type === "batch.escalated");
    expect(escalated.map((e) => e.queueId).sort()).toEqual([team.first.id, team.second.id].sort());
    expect(escalated[0]!.data).toMatchObject({
      from: { id: team.first.id },
      to: { id: team.second.id },
      escalations: 1,
    });
    const agentView = await team.agent.get(`/runs/${run.id}`);
    expect(agentView.body.status).toBe("waiting_approval");
  });

  it("fails closed without an escalation queue: rejected, with the reason", async () => {
    const queue = await makeQueue();
    const agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [queue.name] })).key);
    const { batch } = await pausedRun(
      agent,
      refundBatch({ timeoutSecs: 1, onTimeout: "escalate" }),
    );
    const settled = await settledOrMoved(agent, batch.id, queue.id);
    expect(settled).toMatchObject({ status: "expired", outcome: "rejected" });
    expect(settled.calls[0].decision).toMatchObject({ source: "timeout", outcome: "rejected" });
    expect(settled.calls[0].decision.reason).toMatch(/no escalation queue/);
  });

  it("ends a chain after three escalations, rejected", async () => {
    // Two queues that escalate to each other, each with a one-second deadline.
    const a = await makeQueue({ defaultTimeoutSecs: 1 });
    const b = await makeQueue({ defaultTimeoutSecs: 1 });
    await escalatesTo(a.id, b.id);
    await escalatesTo(b.id, a.id);
    const agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [a.name] })).key);
    const { batch } = await pausedRun(
      agent,
      refundBatch({ timeoutSecs: 1, onTimeout: "escalate" }),
    );
    const settled = await waitUntil(
      async () => {
        const { body } = await agent.get(`/batches/${batch.id}`);
        return body.status === "pending" ? null : body;
      },
      { timeoutMs: 15_000, intervalMs: 100, what: "the chain to end" },
    );
    expect(settled.status).toBe("expired");
    expect(settled.calls[0].decision.reason).toMatch(/after 3 escalations/);
    const moves = await getDb().select().from(events).where(eq(events.batchId, batch.id));
    expect(moves.filter((e) => e.type === "batch.escalated")).toHaveLength(3 * 2);
  });
});

describe("escalation across a restart", () => {
  it("escalates, as soon as a server starts, a deadline that passed while none was running", async () => {
    const team = await chain();
    const { batch } = await pausedRun(
      team.agent,
      refundBatch({ timeoutSecs: 1, onTimeout: "escalate" }),
    );
    await server.stop();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    server = await startServer({
      databaseUrl: process.env.DATABASE_URL!,
      env: { SWEEP_INTERVAL_MS: "60000" },
    });
    // Start-up catches up on overdue deadlines before serving; the periodic sweep is a minute away.
    const agent = apiClient(server.baseUrl, team.agentKey);
    const { body } = await agent.get(`/batches/${batch.id}`);
    expect(body).toMatchObject({ status: "pending", queue: { id: team.second.id } });
    const senior = apiClient(server.baseUrl, team.seniorToken);
    expect((await senior.get("/queue")).body.batches.map((b: { id: string }) => b.id)).toEqual([
      batch.id,
    ]);
  });
});
