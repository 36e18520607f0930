import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeReviewers, startApiServer } from "../support/api-fixtures";
import { makeAgentKey, makeQueue } from "../support/factories";
import { apiClient, type ApiClient } from "../support/http";
import type { TestServer } from "../support/server";

// One agent pausing into two queues: what each queue's reviewers may see and what a decision in
// one queue may (not) settle in the other.

let server: TestServer;
let agent: ApiClient;
let supportReviewer: ApiClient;
let financeReviewer: ApiClient;
let support: { id: string; name: string };
let finance: { id: string; name: string };

beforeAll(async () => {
  server = await startApiServer("cross-queue");
  support = await makeQueue();
  finance = await makeQueue({ requiredApprovals: 2 });
  const key = await makeAgentKey({ queues: [support.name, finance.name] });
  agent = apiClient(server.baseUrl, key.key);
  const [s] = await makeReviewers(1, support.name);
  const [f] = await makeReviewers(1, finance.name);
  supportReviewer = apiClient(server.baseUrl, s!.token);
  financeReviewer = apiClient(server.baseUrl, f!.token);
});
afterAll(() => server?.stop());

const wire = (queue: string, toolCallId: string) => ({
  queue,
  calls: [{ toolCallId, toolName: "wire_money", args: { to: "acct-9", amount: 9999 } }],
});

describe("a run with batches in two queues", () => {
  it("shows each reviewer only the batches of their own queues", async () => {
    const run = (await agent.post("/runs", { batch: wire(support.id, "s1") })).body;
    const supportBatch = run.batches[0];
    await supportReviewer.post(`/calls/${supportBatch.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: 1,
    });
    const claim = (await agent.post(`/runs/${run.id}/claim`, { workerId: "w" })).body;
    const paused = await agent.post(`/runs/${run.id}/batches`, {
      ...wire(finance.id, "f1"),
      claimToken: claim.claimToken,
    });
    expect(paused.status).toBe(201);

    const asAgent = await agent.get(`/runs/${run.id}`);
    expect(asAgent.body.batches.map((b: any) => b.queue.id)).toEqual([support.id, finance.id]);
    const asFinance = await financeReviewer.get(`/runs/${run.id}`);
    expect(asFinance.status).toBe(200);
    expect(asFinance.body.batches.map((b: any) => b.queue.id)).toEqual([finance.id]);
    const asSupport = await supportReviewer.get(`/runs/${run.id}`);
    expect(asSupport.body.batches.map((b: any) => b.queue.id)).toEqual([support.id]);
  });

  it("remembers an approval only in the queue that gave it", async () => {
    const conversationId = `conv-${Date.now()}`;
    const first = (await agent.post("/runs", { conversationId, batch: wire(support.id, "a") }))
      .body;
    const approved = await supportReviewer.post(`/calls/${first.batches[0].calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: 1,
      scope: "conversation",
    });
    expect(approved.status).toBe(200);

    // The same action in the same conversation and queue is settled from memory...
    const again = (await agent.post("/runs", { conversationId, batch: wire(support.id, "b") }))
      .body;
    expect(again.batches[0].calls[0].decision).toMatchObject({ source: "memory" });
    // ...but sent to a stricter queue it waits for that queue's own quorum.
    const elsewhere = (await agent.post("/runs", { conversationId, batch: wire(finance.id, "c") }))
      .body;
    expect(elsewhere.batches[0].calls[0]).toMatchObject({ status: "pending", decision: null });
  });
});

describe("input schemas from different agents", () => {
  it("may reuse a $id; each call's edits are checked against its own schema", async () => {
    const schema = (max: number) => ({
      $id: "https://example.com/refund.json",
      type: "object",
      properties: { amount: { type: "number", maximum: max } },
      required: ["amount"],
    });
    const pause = async (max: number, toolCallId: string) =>
      (
        await agent.post("/runs", {
          batch: {
            queue: support.id,
            calls: [
              { toolCallId, toolName: "refund", args: { amount: 1 }, inputSchema: schema(max) },
            ],
          },
        })
      ).body.batches[0].calls[0];
    const small = await pause(10, "small");
    const large = await pause(1000, "large");
    const edit = (call: any, amount: number) =>
      supportReviewer.post(`/calls/${call.id}/decision`, {
        outcome: "edit",
        expectedRevision: 1,
        editedArgs: { amount },
      });
    expect((await edit(small, 500)).status).toBe(400);
    expect((await edit(large, 500)).status).toBe(200);
  });
});
