import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR } from "@/lib/queues/queue-access";
import { createRule } from "@/lib/routing/create-rule";
import { startApiServer, writeSnapshot } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { loggedEvents, newestSeq } from "@/test/support/flows";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// onTimeout "approve" (issue 14, finding 5): an agent asking for a one-second deadline that
// approves would approve its own call. The queue the batch lands in decides: by default agents may
// not ask for it (400, nothing written); a lead can allow it with a shortest deadline.

let server: TestServer;

beforeAll(async () => {
  server = await startApiServer("timeout-approval");
}, 60_000);
afterAll(() => server?.stop());

const selfApproving = (overrides: Record<string, unknown> = {}) =>
  refundBatch({ timeoutSecs: 1, onTimeout: "approve", ...overrides });

async function agentOn(...queueNames: string[]): Promise<ApiClient> {
  return apiClient(server.baseUrl, (await makeAgentKey({ queues: queueNames })).key);
}

describe("onTimeout approve", () => {
  it("is refused by default, on both ways to pause, writing nothing", async () => {
    const queue = await makeQueue();
    const agent = await agentOn(queue.name);
    const run = (await agent.post("/runs", {})).body;
    const before = await writeSnapshot();

    for (const [path, body] of [
      ["/runs", { batch: selfApproving() }],
      [`/runs/${run.id}/batches`, selfApproving()],
      // a long deadline does not make it acceptable either
      [`/runs/${run.id}/batches`, selfApproving({ timeoutSecs: 86_400 })],
    ] as const) {
      const answer = await agent.post(path, body);
      expect(answer.status).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      expect(answer.body.error.message).toContain(
        `queue '${queue.name}' does not let agents ask for "approve" on timeout`,
      );
      expect(answer.body.error.issues).toEqual([
        { path: "onTimeout", message: expect.stringContaining("reject") },
      ]);
    }
    expect(await writeSnapshot()).toEqual(before);
    // reject and escalate stay open to every agent
    expect(
      (await agent.post("/runs", { batch: selfApproving({ onTimeout: "reject" }) })).status,
    ).toBe(201);
  });

  it("is allowed where the queue allows it, from its minimum deadline up", async () => {
    const queue = await makeQueue({
      approveOnTimeout: true,
      approveOnTimeoutMinSecs: 600,
      defaultTimeoutSecs: 3600,
    });
    const agent = await agentOn(queue.name);

    const short = await agent.post("/runs", { batch: selfApproving({ timeoutSecs: 599 }) });
    expect(short.status).toBe(400);
    expect(short.body.error.issues).toEqual([
      {
        path: "timeoutSecs",
        message: `queue '${queue.name}' approves on timeout only after at least 600 s; this batch's deadline is 599 s`,
      },
    ]);

    const enough = await agent.post("/runs", { batch: selfApproving({ timeoutSecs: 600 }) });
    expect(enough.status).toBe(201);
    expect(enough.body.batches[0]).toMatchObject({ onTimeout: "approve", status: "pending" });
    // No timeoutSecs: the queue's default deadline is the one measured.
    const byDefault = await agent.post("/runs", {
      batch: selfApproving({ timeoutSecs: undefined }),
    });
    expect(byDefault.status).toBe(201);
  });

  it("follows the queue the batch lands in, named or routed", async () => {
    const strict = await makeQueue();
    const lenient = await makeQueue({ approveOnTimeout: true, approveOnTimeoutMinSecs: 1 });
    // The key's default queue allows it; a routing rule sends its refunds to one that does not.
    const key = await makeAgentKey({ queues: [lenient.name, strict.name] });
    const agent = apiClient(server.baseUrl, key.key);
    expect((await agent.post("/runs", { batch: selfApproving() })).status).toBe(201);
    await createRule(OPERATOR, {
      name: "refunds to the strict queue",
      queue: strict.name,
      agent: key.id,
      toolPattern: "refund_*",
    });
    const routed = await agent.post("/runs", { batch: selfApproving() });
    expect(routed.status).toBe(400);
    expect(routed.body.error.message).toContain(`queue '${strict.name}'`);
    // Naming a queue skips routing: the named queue's setting applies.
    expect(
      (await agent.post("/runs", { batch: selfApproving({ queue: lenient.name }) })).status,
    ).toBe(201);
    expect(
      (await agent.post("/runs", { batch: selfApproving({ queue: strict.name }) })).status,
    ).toBe(400);
  });

  it("is a queue setting a lead changes (an event), and a reviewer cannot", async () => {
    const queue = await makeQueue();
    const lead = await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] });
    const member = await makeReviewer({ queues: [{ name: queue.name }] });
    const settings = { approveOnTimeout: true, approveOnTimeoutMinSecs: 900 };

    const asMember = await fetch(`${server.baseUrl}/api/v1/queues/${queue.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${member.token}`, "content-type": "application/json" },
      body: JSON.stringify(settings),
    });
    expect(asMember.status).toBe(403);

    const seq = await newestSeq();
    const asLead = await fetch(`${server.baseUrl}/api/v1/queues/${queue.id}`, {
      method: "PATCH",
      headers: { authorization: `Bearer ${lead.token}`, "content-type": "application/json" },
      body: JSON.stringify(settings),
    });
    expect(asLead.status).toBe(200);
    expect(await asLead.json()).toMatchObject(settings);
    const [event] = await loggedEvents(seq, [queue.id]);
    expect(event).toMatchObject({
      type: "queue.updated",
      data: {
        changes: {
          approveOnTimeout: { before: false, after: true },
          approveOnTimeoutMinSecs: { before: 300, after: 900 },
        },
      },
    });

    const agent = await agentOn(queue.name);
    expect((await agent.post("/runs", { batch: selfApproving({ timeoutSecs: 900 }) })).status).toBe(
      201,
    );
  });
});
