import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { queues, routingRules } from "@/db/schema";
import { pausedRun, startApiServer, writeSnapshot } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// Routing: with no queue named, a batch goes to the first matching rule's queue, else the key's
// default; the rule is recorded on the batch. Only admins manage the rules.

let server: TestServer;
let admin: ApiClient;
let reviewer: ApiClient;
let agent: ApiClient;
let agentId: string;
let home: { id: string; name: string };
let refunds: { id: string; name: string };
let big: { id: string; name: string };

const call = (toolName: string, costEstimate?: number) => ({
  toolCallId: `t-${Math.random()}`,
  toolName,
  args: { n: Math.random() },
  ...(costEstimate !== undefined && { costEstimate }),
});

beforeAll(async () => {
  server = await startApiServer("routing");
  home = await makeQueue();
  refunds = await makeQueue();
  big = await makeQueue();
  const adminUser = await makeReviewer({ queues: [{ name: home.name, role: "admin" }] });
  const plain = await makeReviewer({ queues: [{ name: home.name }] });
  admin = apiClient(server.baseUrl, adminUser.token);
  reviewer = apiClient(server.baseUrl, plain.token);
  const key = await makeAgentKey({ name: "Router bot", queues: [home.name] });
  agent = apiClient(server.baseUrl, key.key);
  agentId = key.id;
}, 60_000);
afterAll(() => server?.stop());

describe("routing rules", () => {
  it("only admins read or change them; bad input and clashes write nothing", async () => {
    const body = { name: "no", queue: refunds.name };
    expect((await reviewer.get("/routing-rules")).status).toBe(403);
    expect((await reviewer.post("/routing-rules", body)).status).toBe(403);
    expect((await agent.post("/routing-rules", body)).status).toBe(403);
    expect((await apiClient(server.baseUrl).get("/routing-rules")).status).toBe(401);

    const before = await writeSnapshot();
    const bad = await admin.post("/routing-rules", {
      name: "x",
      queue: "nope",
      toolPattern: "a b",
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.issues.map((i: { path: string }) => i.path)).toContain("toolPattern");
    const unknownQueue = await admin.post("/routing-rules", { name: "x", queue: "nope" });
    expect(unknownQueue.status).toBe(400);
    expect(unknownQueue.body.error.issues[0].path).toBe("queue");
    expect(await writeSnapshot()).toEqual(before);
  });

  it("sends a batch to the first matching rule's queue, records it, and falls back to the default", async () => {
    const bigRule = await admin.post("/routing-rules", {
      name: "Big spend",
      queue: big.name,
      minCost: 1000,
      position: 5,
    });
    expect(bigRule.status).toBe(201);
    const refundRule = await admin.post("/routing-rules", {
      name: "Refunds",
      queue: refunds.id,
      agent: "Router bot",
      toolPattern: "refund_*",
    });
    expect(refundRule.status).toBe(201);
    expect(refundRule.body).toMatchObject({
      queue: { id: refunds.id },
      agent: { id: agentId, name: "Router bot" },
      position: 15,
    });
    expect((await admin.post("/routing-rules", { name: "Refunds", queue: big.name })).status).toBe(
      409,
    );
    const listed = await admin.get("/routing-rules");
    expect(listed.body.rules.map((r: { name: string }) => r.name)).toEqual([
      "Big spend",
      "Refunds",
    ]);

    const refund = await pausedRun(agent, { calls: [call("refund_order", 40)] });
    expect(refund.batch.queue.id).toBe(refunds.id);
    expect(refund.batch.routing).toEqual({ ruleId: refundRule.body.id, name: "Refunds" });
    const costly = await pausedRun(agent, { calls: [call("refund_order", 5000)] });
    expect(costly.batch.queue.id).toBe(big.id);
    const other = await pausedRun(agent, { calls: [call("send_email")] });
    expect(other.batch.queue.id).toBe(home.id);
    expect(other.batch.routing).toBeNull();
    // A queue named in the request wins over the rules (the key may target it).
    const named = await pausedRun(agent, { queue: home.name, calls: [call("refund_order", 40)] });
    expect(named.batch.queue.id).toBe(home.id);
    expect(named.batch.routing).toBeNull();

    // Disabled, or pointing at an archived queue: skipped.
    await admin.raw(`/routing-rules/${refundRule.body.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ enabled: false }),
    });
    expect((await pausedRun(agent, { calls: [call("refund_order", 40)] })).batch.queue.id).toBe(
      home.id,
    );
    await getDb().update(queues).set({ archivedAt: Date.now() }).where(eq(queues.id, big.id));
    expect((await pausedRun(agent, { calls: [call("refund_order", 5000)] })).batch.queue.id).toBe(
      home.id,
    );
    await getDb().update(queues).set({ archivedAt: null }).where(eq(queues.id, big.id));

    // Deleting a rule leaves the batches it routed naming it.
    const deleted = await admin.raw(`/routing-rules/${bigRule.body.id}`, { method: "DELETE" });
    expect(deleted.status).toBe(204);
    expect(
      await getDb().select().from(routingRules).where(eq(routingRules.id, bigRule.body.id)),
    ).toEqual([]);
    const after = await agent.get(`/batches/${costly.batch.id}`);
    expect(after.body.routing).toEqual({ ruleId: bigRule.body.id, name: "(deleted rule)" });
    expect(
      (await admin.raw(`/routing-rules/${bigRule.body.id}`, { method: "DELETE" })).status,
    ).toBe(404);
  });

  it("refuses a batch for an archived queue, named or by default, writing nothing", async () => {
    const open = await makeQueue();
    const closing = await makeQueue();
    const key = await makeAgentKey({ queues: [closing.name, open.name] });
    const client = apiClient(server.baseUrl, key.key);
    await getDb().update(queues).set({ archivedAt: Date.now() }).where(eq(queues.id, closing.id));
    const before = await writeSnapshot();
    const byDefault = await client.post("/runs", { batch: { calls: [call("send_email")] } });
    expect(byDefault.status).toBe(409);
    expect(byDefault.body.error.code).toBe("queue_archived");
    const named = await client.post("/runs", {
      batch: { queue: closing.name, calls: [call("send_email")] },
    });
    expect(named.status).toBe(409);
    expect(await writeSnapshot()).toEqual(before);
    const elsewhere = await client.post("/runs", {
      batch: { queue: open.name, calls: [call("send_email")] },
    });
    expect(elsewhere.status).toBe(201);
  });

  it("moving a rule changes which rule wins; only admins move, bad moves write nothing", async () => {
    const first = await makeQueue();
    const second = await makeQueue();
    const a = await admin.post("/routing-rules", {
      name: "Deploys A",
      queue: first.name,
      toolPattern: "deploy_*",
    });
    const b = await admin.post("/routing-rules", {
      name: "Deploys B",
      queue: second.name,
      toolPattern: "deploy_prod",
    });
    expect([a.status, b.status]).toEqual([201, 201]);
    const deploy = () => pausedRun(agent, { calls: [call("deploy_prod")] });
    expect((await deploy()).batch.routing.name).toBe("Deploys A");

    const before = await writeSnapshot();
    expect((await reviewer.post(`/routing-rules/${b.body.id}/move`, { to: 0 })).status).toBe(403);
    expect((await admin.post(`/routing-rules/${b.body.id}/move`, { to: -1 })).status).toBe(400);
    expect((await admin.post("/routing-rules/nope/move", { to: 0 })).status).toBe(404);
    expect(await writeSnapshot()).toEqual(before);

    const moved = await admin.post(`/routing-rules/${b.body.id}/move`, { to: 0 });
    expect(moved.status).toBe(200);
    const order = moved.body.rules.map((r: { name: string }) => r.name);
    expect(order[0]).toBe("Deploys B");
    expect(order.indexOf("Deploys A")).toBeGreaterThan(0);
    const routed = await deploy();
    expect(routed.batch.routing.name).toBe("Deploys B");
    expect(routed.batch.queue.id).toBe(second.id);

    // Past the end: the rule becomes the last one tried.
    const last = await admin.post(`/routing-rules/${b.body.id}/move`, { to: 999 });
    expect(last.body.rules.at(-1).name).toBe("Deploys B");
    expect((await deploy()).batch.routing.name).toBe("Deploys A");
  });
});
