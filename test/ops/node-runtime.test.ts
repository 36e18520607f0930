import { afterAll, beforeAll, expect, it } from "vitest";
import { approveBatch, pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// The production server runs on the Node that runs the tests (test/support/server.ts starts it
// with process.execPath): Node 20.9+ in `vitest run`, Node 24 in `npm run test:node24`
// (test/support/vitest.node24.config.ts). The server's own report of its Node (prom-client's
// nodejs_version_info on /metrics) says which one this file tested, and one whole approval passes
// on it: an agent pauses, a reviewer approves, the agent claims, reports and completes the run.

const TOKEN = "node-runtime-test-token-0123456789abcdef";
let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("node-runtime", { METRICS_TOKEN: TOKEN });
}, 90_000);
afterAll(() => server?.stop());

it("the production server runs on the tests' Node and carries a run from pause to completion", async () => {
  const metrics = await fetch(`${server.baseUrl}/metrics`, {
    headers: { authorization: `Bearer ${TOKEN}` },
  });
  expect(metrics.status).toBe(200);
  const version = /^nodejs_version_info\{version="([^"]+)"/m.exec(await metrics.text())?.[1];
  expect(version).toBe(process.version);

  const queue = await makeQueue();
  const reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
  const agentKey = await makeAgentKey({ queues: [queue.name] });
  const agent = apiClient(server.baseUrl, agentKey.key);
  const { run, batch } = await pausedRun(agent, refundBatch());
  await approveBatch(apiClient(server.baseUrl, reviewer.token), batch);

  const claim = await agent.post(`/runs/${run.id}/claim`, { workerId: "node-runtime" });
  expect(claim.status).toBe(200);
  const call = claim.body.batch.calls[0];
  expect(call.decision.outcome).toBe("approved");
  const reported = await agent.post(`/runs/${run.id}/events`, {
    claimToken: claim.body.claimToken,
    type: "tool.completed",
    toolCallId: call.toolCallId,
    result: { refunded: true },
  });
  expect(reported.status).toBe(201);
  const completed = await agent.post(`/runs/${run.id}/complete`, {
    claimToken: claim.body.claimToken,
    outcome: "completed",
  });
  expect(completed.status).toBe(200);
  expect(completed.body.status).toBe("completed");
});
