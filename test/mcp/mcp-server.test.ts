import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";
import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";

// The MCP server at /api/mcp, driven by the SDK's own client over streamable HTTP against the
// real app: both tools, reviewers deciding through the API meanwhile, policies, auth and limits.

const BODY_LIMIT = 64 * 1024;

let server: TestServer;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startApiServer("mcp", { MAX_BODY_BYTES: String(BODY_LIMIT) });
}, 60_000);
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await server?.stop();
});

function mcpUrl() {
  return new URL(`${server.baseUrl}/api/mcp`);
}

/** The SDK's client, connected with an agent key (or any bearer) as a plain header. */
async function connect(bearer: string): Promise<Client> {
  const client = new Client({ name: "countersign-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(mcpUrl(), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

/** A queue with a reviewer (Dana Reviewer), an agent key, and MCP and API clients for them. */
async function team() {
  const t = await makeQuickTeam();
  return {
    ...t,
    mcp: await connect(t.agent.key),
    agentApi: apiClient(server.baseUrl, t.agent.key),
    reviewerApi: apiClient(server.baseUrl, t.reviewer.token),
  };
}

type Approval = {
  runId: string;
  batchId: string;
  status: string;
  outcome: string | null;
  reviewUrl: string;
  queue: string;
  expiresAt: string;
  decision: {
    outcome: string;
    source: string;
    reason: string | null;
    editedArgs: Record<string, unknown> | null;
    by: { id: string; name: string } | null;
    policyRule: string | null;
    blocked: boolean;
  } | null;
  argsToRun: Record<string, unknown> | null;
};

async function call(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
  return { result, text, approval: result.structuredContent as Approval };
}

const refund = {
  toolName: "refund_order",
  args: { orderId: "A-1001", amount: 25 },
  summary: "Refund order A-1001 in full",
  risks: ["Money leaves the company"],
  costEstimate: 25,
};

/** The reviewer's view of the batch's only call, once it shows in their queue. */
async function pendingCallOf(reviewer: ApiClient, batchId: string) {
  const answer = await reviewer.get(`/batches/${batchId}`);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.calls[0] as { id: string; revision: number };
}

describe("tools/list", () => {
  it("offers request_approval and get_approval with input and output schemas", async () => {
    const { mcp } = await team();
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["get_approval", "request_approval"]);
    const request = tools.find((t) => t.name === "request_approval")!;
    expect(request.description).toMatch(/before you run a risky tool call/);
    expect(request.inputSchema.required).toEqual(expect.arrayContaining(["toolName", "args"]));
    expect(Object.keys(request.inputSchema.properties!)).toEqual(
      expect.arrayContaining([
        "summary",
        "risks",
        "costEstimate",
        "inputSchema",
        "queue",
        "timeoutSecs",
        "onTimeout",
        "runId",
        "conversationId",
        "externalId",
        "wait",
      ]),
    );
    expect(request.inputSchema.properties!.wait).toMatchObject({ minimum: 0, maximum: 60 });
    expect(request.outputSchema?.required).toEqual(
      expect.arrayContaining(["runId", "batchId", "status", "outcome", "reviewUrl", "decision"]),
    );
    const get = tools.find((t) => t.name === "get_approval")!;
    expect(get.inputSchema.required).toEqual(["batchId"]);
    expect(get.annotations?.readOnlyHint).toBe(true);
    expect(mcp.getInstructions()).toMatch(/request_approval/);
  });
});

describe("request_approval and get_approval", () => {
  it("asks (pending with a review URL), a reviewer approves with an edit, get_approval answers approved with the edited args", async () => {
    const { mcp, agentApi, reviewerApi, queue } = await team();
    const asked = await call(mcp, "request_approval", {
      ...refund,
      conversationId: "chat-42",
    });
    expect(asked.result.isError).toBeFalsy();
    expect(asked.approval).toMatchObject({
      status: "pending",
      outcome: null,
      decision: null,
      argsToRun: null,
      queue: queue.name,
      reviewUrl: `${server.baseUrl}/batches/${asked.approval.batchId}`,
    });
    expect(asked.text).toMatch(/^Pending: a reviewer .* has been asked/);
    expect(asked.text).toContain(`get_approval with batchId "${asked.approval.batchId}"`);

    // the same run and batch the HTTP API shows
    const run = await agentApi.get(`/runs/${asked.approval.runId}`);
    expect(run.body).toMatchObject({ status: "waiting_approval", conversationId: "chat-42" });
    expect(run.body.batches[0]).toMatchObject({ id: asked.approval.batchId });
    expect(run.body.batches[0].calls[0]).toMatchObject({
      toolName: "refund_order",
      args: refund.args,
      summary: refund.summary,
      risks: refund.risks,
      costEstimate: 25,
    });

    const pending = await call(mcp, "get_approval", { batchId: asked.approval.batchId });
    expect(pending.approval.status).toBe("pending");

    const target = await pendingCallOf(reviewerApi, asked.approval.batchId);
    const edited = await reviewerApi.post(`/calls/${target.id}/decision`, {
      outcome: "edit",
      expectedRevision: target.revision,
      editedArgs: { orderId: "A-1001", amount: 20 },
      reason: "Shipping is not refunded",
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);

    const decided = await call(mcp, "get_approval", { batchId: asked.approval.batchId });
    expect(decided.approval).toMatchObject({
      status: "decided",
      outcome: "approved",
      decision: {
        outcome: "approved",
        source: "reviewer",
        by: { name: "Dana Reviewer" },
        editedArgs: { orderId: "A-1001", amount: 20 },
        blocked: false,
      },
      argsToRun: { orderId: "A-1001", amount: 20 },
    });
    expect(decided.text).toBe(
      'Approved by Dana Reviewer: run refund_order with these edited args, not the ones you asked for: {"orderId":"A-1001","amount":20}',
    );
  });

  it("waits for the decision: a reviewer rejects while the call is held, and the answer carries the reason", async () => {
    const { mcp, reviewerApi, queue } = await team();
    const started = Date.now();
    let answered = false;
    const held = call(mcp, "request_approval", { ...refund, wait: 30 }).finally(
      () => (answered = true),
    );

    // The reviewer finds the card in their queue and rejects it while the tool call is open.
    let batch: { id: string; calls: { id: string; revision: number }[] } | undefined;
    while (!batch) {
      const queued = await reviewerApi.get(`/queue?queue=${queue.id}&status=pending`);
      batch = queued.body.batches[0];
      if (!batch) await new Promise((r) => setTimeout(r, 50));
    }
    expect(answered).toBe(false); // still held: the decision below is what ends it
    const rejected = await reviewerApi.post(`/calls/${batch.calls[0]!.id}/decision`, {
      outcome: "reject",
      expectedRevision: batch.calls[0]!.revision,
      reason: "The order was already refunded",
    });
    expect(rejected.status).toBe(200);

    const { approval, text } = await held;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(approval).toMatchObject({
      batchId: batch.id,
      status: "decided",
      outcome: "rejected",
      decision: {
        outcome: "rejected",
        source: "reviewer",
        reason: "The order was already refunded",
        by: { name: "Dana Reviewer" },
      },
      argsToRun: null,
    });
    expect(text).toBe(
      "Rejected by Dana Reviewer: The order was already refunded — do not run refund_order.",
    );
  });

  it("a reviewer's approval for the conversation approves the same call later in it at once", async () => {
    const { mcp, reviewerApi } = await team();
    const first = await call(mcp, "request_approval", { ...refund, conversationId: "chat-7" });
    const target = await pendingCallOf(reviewerApi, first.approval.batchId);
    const approved = await reviewerApi.post(`/calls/${target.id}/decision`, {
      outcome: "approve",
      expectedRevision: target.revision,
      scope: "conversation",
    });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);

    const again = await call(mcp, "request_approval", { ...refund, conversationId: "chat-7" });
    expect(again.approval).toMatchObject({
      status: "decided",
      outcome: "approved",
      decision: { source: "memory", by: { name: "Dana Reviewer" } },
      argsToRun: refund.args,
    });
    expect(again.text).toBe(
      'Approved by a remembered approval from Dana Reviewer: run refund_order with these args: {"orderId":"A-1001","amount":25}',
    );
    const elsewhere = await call(mcp, "request_approval", { ...refund, conversationId: "chat-8" });
    expect(elsewhere.approval.status).toBe("pending");
  });

  it("get_approval with a short wait answers still pending when nobody decides", async () => {
    const { mcp } = await team();
    const asked = await call(mcp, "request_approval", refund);
    const started = Date.now();
    const waited = await call(mcp, "get_approval", { batchId: asked.approval.batchId, wait: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(waited.approval.status).toBe("pending");
  });

  it("pauses an existing running run when given its runId; a second pause of a waiting run is a tool error (409 not_ready)", async () => {
    const { mcp, agentApi } = await team();
    const created = await agentApi.post("/runs", { externalId: "job-7" });
    expect(created.status).toBe(201);
    const asked = await call(mcp, "request_approval", { ...refund, runId: created.body.id });
    expect(asked.approval).toMatchObject({ runId: created.body.id, status: "pending" });

    const again = await call(mcp, "request_approval", { ...refund, runId: created.body.id });
    expect(again.result.isError).toBe(true);
    expect(again.text).toMatch(/already waiting for approval.*\(not_ready\)/);
  });
});

describe("finishing runs started through MCP", () => {
  const runCompletedEvents = async (runId: string) =>
    (
      await getDb()
        .select({ data: events.data })
        .from(events)
        .where(and(eq(events.runId, runId), eq(events.type, "run.completed")))
    ).map((e) => e.data);

  it("finishes the run once its client reads the decision, exactly once; an unread decision leaves it ready", async () => {
    const { mcp, agentApi, reviewerApi } = await team();
    const asked = await call(mcp, "request_approval", refund);
    const { runId, batchId } = asked.approval;
    const target = await pendingCallOf(reviewerApi, batchId);
    const approved = await reviewerApi.post(`/calls/${target.id}/decision`, {
      outcome: "approve",
      expectedRevision: target.revision,
    });
    expect(approved.status).toBe(200);
    // decided, but its client has not heard yet: the run waits for it
    expect((await agentApi.get(`/runs/${runId}`)).body.status).toBe("ready");

    const read = await call(mcp, "get_approval", { batchId });
    expect(read.approval).toMatchObject({ status: "decided", argsToRun: refund.args });
    const run = (await agentApi.get(`/runs/${runId}`)).body;
    expect(run.status).toBe("completed");
    // reading again answers the same and finishes nothing twice
    const again = await call(mcp, "get_approval", { batchId });
    expect(again.result.isError).toBeFalsy();
    expect(again.approval).toMatchObject({ status: "decided", outcome: "approved" });
    expect(await runCompletedEvents(runId)).toEqual([
      { result: { via: "mcp", batchId, outcome: "approved", status: "decided" } },
    ]);
    // nothing is left for a worker to claim
    const claim = await agentApi.post(`/runs/${runId}/claim`, { workerId: "w1" });
    expect(claim.status).toBe(409);
    expect(claim.body.error.code).toBe("run_terminal");
  });

  it("finishes a run whose call was settled at once, and one rejected while the call was held", async () => {
    const { mcp, agentApi, reviewerApi, queue } = await team();
    const first = await call(mcp, "request_approval", { ...refund, conversationId: "chat-9" });
    const target = await pendingCallOf(reviewerApi, first.approval.batchId);
    await reviewerApi.post(`/calls/${target.id}/decision`, {
      outcome: "approve",
      expectedRevision: target.revision,
      scope: "conversation",
    });
    const remembered = await call(mcp, "request_approval", { ...refund, conversationId: "chat-9" });
    expect(remembered.approval.status).toBe("decided");
    expect((await agentApi.get(`/runs/${remembered.approval.runId}`)).body.status).toBe(
      "completed",
    );

    const held = call(mcp, "request_approval", { ...refund, wait: 30 });
    let batch: { id: string; calls: { id: string; revision: number }[] } | undefined;
    while (!batch) {
      const queued = await reviewerApi.get(`/queue?queue=${queue.id}&status=pending`);
      batch = queued.body.batches[0];
      if (!batch) await new Promise((r) => setTimeout(r, 50));
    }
    await reviewerApi.post(`/calls/${batch.calls[0]!.id}/decision`, {
      outcome: "reject",
      expectedRevision: batch.calls[0]!.revision,
      reason: "No",
    });
    const { approval } = await held;
    expect(approval.outcome).toBe("rejected");
    const run = (await agentApi.get(`/runs/${approval.runId}`)).body;
    expect(run.status).toBe("completed");
  });

  it("leaves a run started through the HTTP API for its worker, even when MCP reads its decision", async () => {
    const { mcp, agentApi, reviewerApi } = await team();
    const created = await agentApi.post("/runs", { externalId: "job-9" });
    const asked = await call(mcp, "request_approval", { ...refund, runId: created.body.id });
    const target = await pendingCallOf(reviewerApi, asked.approval.batchId);
    await reviewerApi.post(`/calls/${target.id}/decision`, {
      outcome: "approve",
      expectedRevision: target.revision,
    });
    const read = await call(mcp, "get_approval", { batchId: asked.approval.batchId });
    expect(read.approval.status).toBe("decided");
    expect((await agentApi.get(`/runs/${created.body.id}`)).body.status).toBe("ready");
    const claim = await agentApi.post(`/runs/${created.body.id}/claim`, { workerId: "w1" });
    expect(claim.status).toBe(200);
    expect(await runCompletedEvents(created.body.id)).toEqual([]);
  });
});

describe("policies", () => {
  it("a call a deny rule blocks is rejected at once, with the rule's reason; an allowed one is approved at once", async () => {
    const { mcp, queue } = await team();
    const lead = await makeReviewer({
      name: "Lee Lead",
      queues: [{ name: queue.name, role: "lead" }],
    });
    const leadApi = apiClient(server.baseUrl, lead.token);
    for (const rule of [
      {
        name: "Output deletes",
        effect: "deny",
        toolPattern: "delete_*",
        argPredicates: [{ path: "path", op: "prefix", value: "/output/" }],
        reason: "Output is append-only.",
      },
      { name: "Reads", effect: "allow", toolPattern: "read_*" },
    ]) {
      const created = await leadApi.post("/policy-rules", { ...rule, queue: queue.id });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }

    const started = Date.now();
    const blocked = await call(mcp, "request_approval", {
      toolName: "delete_file",
      args: { path: "/output/report.csv" },
      wait: 30,
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(blocked.approval).toMatchObject({
      status: "decided",
      outcome: "rejected",
      decision: {
        outcome: "rejected",
        source: "policy",
        by: null,
        policyRule: "Output deletes",
        blocked: true,
      },
      argsToRun: null,
    });
    expect(blocked.text).toBe(
      "Rejected by policy — do not run delete_file. Blocked by policy rule 'Output deletes': Output is append-only. Do not retry this call.",
    );

    const allowed = await call(mcp, "request_approval", {
      toolName: "read_file",
      args: { path: "/output/report.csv" },
    });
    expect(allowed.approval).toMatchObject({
      status: "decided",
      outcome: "approved",
      decision: { source: "policy", policyRule: "Reads", blocked: false },
      argsToRun: { path: "/output/report.csv" },
    });
    expect(allowed.text).toBe(
      'Approved by policy \'Reads\': run read_file with these args: {"path":"/output/report.csv"}',
    );
  });
});

describe("tool errors", () => {
  it("invalid input and the contract's errors are tool errors the model can read, not transport failures", async () => {
    const { mcp } = await team();

    const noArgs = await call(mcp, "request_approval", { toolName: "refund_order" });
    expect(noArgs.result.isError).toBe(true);
    expect(noArgs.text).toMatch(/Input validation error.*args/s);

    const longWait = await call(mcp, "get_approval", { batchId: "x", wait: 600 });
    expect(longWait.result.isError).toBe(true);
    expect(longWait.text).toMatch(/wait/);

    const badSchema = await call(mcp, "request_approval", {
      ...refund,
      inputSchema: { type: "no-such-type" },
    });
    expect(badSchema.result.isError).toBe(true);
    expect(badSchema.text).toMatch(/not a valid JSON Schema/);

    const unknownQueue = await call(mcp, "request_approval", { ...refund, queue: "nope" });
    expect(unknownQueue.result.isError).toBe(true);
    expect(unknownQueue.text).toMatch(/^Queue 'nope' .* not found\. \(not_found\)$/);

    const missing = await call(mcp, "get_approval", { batchId: "no-such-batch" });
    expect(missing.result.isError).toBe(true);
    expect(missing.text).toBe("Batch not found. (not_found)");

    // issue 24: stored texts refuse control characters, here too
    const nul = await call(mcp, "request_approval", { ...refund, conversationId: "thread\u0000" });
    expect(nul.result.isError).toBe(true);
    expect(nul.text).toMatch(/must not contain control characters at conversationId/);

    // the connection still works after all of that
    const fine = await call(mcp, "request_approval", refund);
    expect(fine.approval.status).toBe("pending");
  });

  it("another agent's batch does not exist for this agent", async () => {
    const { mcp } = await team();
    const asked = await call(mcp, "request_approval", refund);
    const other = await team();
    const peek = await call(other.mcp, "get_approval", { batchId: asked.approval.batchId });
    expect(peek.result.isError).toBe(true);
    expect(peek.text).toBe("Batch not found. (not_found)");
  });
});

describe("the endpoint", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "0" },
    },
  };
  const post = (headers: Record<string, string>, body: string = JSON.stringify(initialize)) =>
    fetch(mcpUrl(), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body,
    });

  it("takes agent keys only: no key, a bad key or a reviewer token is 401 with WWW-Authenticate", async () => {
    const reviewer = await makeReviewer();
    for (const headers of [
      {} as Record<string, string>,
      { authorization: "Bearer cs_agent_not-a-real-key" },
      { authorization: `Bearer ${reviewer.token}` },
    ]) {
      const response = await post(headers);
      expect(response.status, JSON.stringify(headers)).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer realm="countersign"/);
      expect((await response.json()).error.code).toBe("unauthenticated");
    }
    const error = await connect("cs_agent_not-a-real-key").catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
  });

  it("answers an agent's initialize as plain JSON without a session; GET and DELETE are 405", async () => {
    const agent = await makeAgentKey({ queues: [(await makeQueue()).name] });
    const auth = { authorization: `Bearer ${agent.key}` };
    const response = await post(auth);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("mcp-session-id")).toBeNull();
    expect((await response.json()).result.serverInfo.name).toBe("countersign");

    for (const method of ["GET", "DELETE"]) {
      const refused = await fetch(mcpUrl(), {
        method,
        headers: { ...auth, accept: "text/event-stream" },
      });
      expect(refused.status, method).toBe(405);
      expect(refused.headers.get("allow")).toBe("POST");
      expect((await fetch(mcpUrl(), { method })).status, method).toBe(401);
    }
  });

  it("refuses bodies over the API's limit (413), other media types (415) and broken JSON (400) like the API", async () => {
    const agent = await makeAgentKey({ queues: [(await makeQueue()).name] });
    const auth = { authorization: `Bearer ${agent.key}` };
    const huge = JSON.stringify({ ...initialize, padding: "x".repeat(BODY_LIMIT + 1) });
    const tooLarge = await post(auth, huge);
    expect(tooLarge.status).toBe(413);
    expect((await tooLarge.json()).error.code).toBe("payload_too_large");

    const text = await post({ ...auth, "content-type": "text/plain" });
    expect(text.status).toBe(415);
    expect((await text.json()).error.code).toBe("unsupported_media_type");

    const broken = await post(auth, "{not json");
    expect(broken.status).toBe(400);
    expect((await broken.json()).error.code).toBe("invalid_json");
  });
});
