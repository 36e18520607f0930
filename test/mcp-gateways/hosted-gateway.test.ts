import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { startEverything, type EverythingHost } from "@/test/mcp-gateway/everything-host";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";

// Issue 25, item 6: a hosted gateway in front of a real @modelcontextprotocol/server-everything
// over streamable HTTP, one that wants its own API token. An agent connects to
// /api/mcp/gateways/{name} with the official MCP client and its agent key only; Countersign
// connects upstream with the sealed token, relays the server, and gates every tools/call as that
// agent's call. The token never reaches the agent: not in answers, errors, the card or events.

const UPSTREAM_TOKEN = "Bearer upstream-secret-4b1d9e7a0c";

let server: TestServer;
let everything: EverythingHost;
/** an upstream that refuses, quoting the Authorization it was sent */
let echoing: Server;
let echoingUrl: string;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;
let admin: ApiClient;
let reviewer: ApiClient;
let outsiderKey: string;
const open: Client[] = [];

beforeAll(async () => {
  server = await startApiServer("mcp-gateways-hosted");
  everything = await startEverything({ requireHeaders: { Authorization: UPSTREAM_TOKEN } });
  echoing = createServer((request, response) => {
    response
      .writeHead(401, { "content-type": "text/plain" })
      .end(`token refused: ${request.headers.authorization}`);
  });
  await new Promise<void>((resolve) => echoing.listen(0, "127.0.0.1", resolve));
  echoingUrl = `http://127.0.0.1:${(echoing.address() as { port: number }).port}/mcp`;

  team = await makeQuickTeam();
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
  const adminQueue = await makeQueue();
  admin = apiClient(
    server.baseUrl,
    (await makeReviewer({ queues: [{ name: adminQueue.name, role: "admin" }] })).token,
  );
  outsiderKey = (await makeAgentKey({ name: "Outsider bot", queues: [team.queue.name] })).key;
  for (const [name, url] of [
    ["everything", everything.url],
    ["retired", everything.url],
    ["echoing", echoingUrl],
  ] as const) {
    const created = await admin.post("/mcp-gateways", {
      name,
      url,
      headers: { Authorization: UPSTREAM_TOKEN },
      agents: [team.agent.id],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    if (name === "retired")
      expect((await admin.post(`/mcp-gateways/${created.body.gateway.id}/disable`)).status).toBe(
        200,
      );
  }
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close().catch(() => {})));
  await everything?.close();
  echoing?.closeAllConnections();
  await new Promise((resolve) => echoing?.close(resolve));
  await server?.stop();
});

const endpoint = (name: string) => new URL(`${server.baseUrl}/api/mcp/gateways/${name}`);

async function connect(name = "everything", key = team.agent.key) {
  const client = new Client({ name: "hosted-test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(endpoint(name), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
  });
  open.push(client);
  await client.connect(transport);
  return { client, transport };
}

/** An initialize POSTed by hand, to read the HTTP answer itself. */
async function initialize(name: string, key?: string) {
  const response = await fetch(endpoint(name), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "curl", version: "1" },
      },
    }),
  });
  return { status: response.status, body: await response.json() };
}

describe("a hosted gateway", () => {
  it("relays the upstream, reached with its own token, to an allowed agent key", async () => {
    const { client } = await connect();
    expect(client.getServerVersion()?.name).toBe("mcp-servers/everything");
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("echo");
  });

  it("puts a tools/call to Countersign: it waits for the decision, then runs exactly the approved arguments", async () => {
    const { client, transport } = await connect();
    const answer = client.callTool(
      { name: "echo", arguments: { message: "hello from the agent" } },
      undefined,
      { timeout: 60_000 },
    ) as Promise<CallToolResult>;
    // The card, in the agent's queue, as the reviewer sees it.
    const batch = await waitUntil(
      async () => {
        const queue = await reviewer.get(`/queue?queue=${team.queue.id}&status=pending`);
        return queue.body.batches?.find(
          (b: { calls: { toolName: string }[] }) => b.calls[0]?.toolName === "echo",
        );
      },
      { timeoutMs: 15_000, what: "the echo card" },
    );
    const [call] = batch.calls;
    expect(call.args).toEqual({ message: "hello from the agent" });
    expect(call.metadata.mcp).toMatchObject({ server: "everything", tool: "everything.echo" });
    expect(call.metadata.mcp.client).toBe("hosted-test-client");
    expect(JSON.stringify(batch)).not.toContain("upstream-secret");

    let settled = false;
    void answer.finally(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(settled).toBe(false); // nothing ran while the card waits

    const decided = await reviewer.post(`/calls/${call.id}/decision`, {
      outcome: "edit",
      expectedRevision: call.revision,
      editedArgs: { message: "edited by Dana" },
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const result = await answer;
    expect(result.isError).toBeFalsy();
    const text = JSON.stringify(result.content);
    expect(text).toContain("Echo: edited by Dana");
    expect(text).not.toContain("Echo: hello from the agent");
    expect(text).toContain("changed 'message'");

    // The upstream's outcome is reported on the run; ending the session (DELETE) completes it.
    const agent = apiClient(server.baseUrl, team.agent.key);
    await waitUntil(
      async () =>
        (await getDb().select().from(events)).find(
          (e) => e.type === "tool.completed" && e.runId === batch.runId,
        ),
      { timeoutMs: 10_000, what: "tool.completed" },
    );
    await transport.terminateSession();
    await waitUntil(
      async () => (await agent.get(`/runs/${batch.runId}`)).body.status === "completed",
      { timeoutMs: 10_000, what: "the run completed when the session ended" },
    );
    // the ended session is gone: its id is answered 404 (initialize again)
    const after = await fetch(endpoint("everything"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${team.agent.key}`,
        "mcp-session-id": transport.sessionId ?? "ended",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }),
    });
    expect(after.status).toBe(404);
  }, 60_000);

  it("forwards a call a policy allows at once, and never forwards one a policy denies", async () => {
    const lead = await makeReviewer({ queues: [{ name: team.queue.name, role: "lead" }] });
    const leadClient = apiClient(server.baseUrl, lead.token);
    for (const rule of [
      { name: "sums are harmless", effect: "allow", toolPattern: "everything.get-sum" },
      {
        name: "no environment",
        effect: "deny",
        toolPattern: "everything.get-env",
        reason: "Environment variables stay on the server.",
      },
    ]) {
      const created = await leadClient.post("/policy-rules", { queue: team.queue.name, ...rule });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
    }
    const { client } = await connect();
    const sum = (await client.callTool({
      name: "get-sum",
      arguments: { a: 2, b: 3 },
    })) as CallToolResult;
    expect(sum.isError).toBeFalsy();
    expect(JSON.stringify(sum.content)).toContain("5");
    const env = (await client.callTool({ name: "get-env", arguments: {} })) as CallToolResult;
    expect(env.isError).toBe(true);
    expect(JSON.stringify(env.content)).toContain("Environment variables stay on the server.");
    expect(JSON.stringify(env.content)).not.toContain("PATH");
  });

  it("answers without an agent key 401, an unknown or disabled gateway or a key not allowed 404", async () => {
    const none = await initialize("everything");
    expect(none.status).toBe(401);
    expect(none.body.error.code).toBe("unauthenticated");
    const reviewerToken = await initialize("everything", team.reviewer.token);
    expect(reviewerToken.status).toBe(401);

    const unknown = await initialize("no-such-gateway", team.agent.key);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "not_found" });
    expect(unknown.body.error.message).toContain("no-such-gateway");
    const disabled = await initialize("retired", team.agent.key);
    expect(disabled.status).toBe(404);
    expect(disabled.body.error.message).toContain("disabled");

    // a key not allowed on it is not told the gateway exists
    const outsider = await initialize("everything", outsiderKey);
    expect(outsider.status).toBe(404);
    expect(outsider.body.error.code).toBe("not_found");
  });

  it("ends an open session once the gateway is edited (404: initialize again)", async () => {
    const { client, transport } = await connect();
    await client.listTools();
    const listed = await admin.get("/mcp-gateways");
    const gateway = listed.body.gateways.find((g: { name: string }) => g.name === "everything");
    const edited = await admin.raw(`/mcp-gateways/${gateway.id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ expectedRevision: gateway.revision, agents: [team.agent.id] }),
    });
    expect(edited.status).toBe(200);
    const ping = await fetch(endpoint("everything"), {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        authorization: `Bearer ${team.agent.key}`,
        "mcp-session-id": transport.sessionId!,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" }),
    });
    expect(ping.status).toBe(404);
    // ended by the edit itself, or (had it not finished yet) at this request
    expect((await ping.json()).error.message).toMatch(/session ended|gateway was changed/);
    // a new session works on the new settings
    const again = await connect();
    expect((await again.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it("never hands the agent the upstream's token, even when the upstream quotes it", async () => {
    const failed = await connect("echoing").then(
      () => null,
      (error: Error) => error,
    );
    expect(failed).toBeInstanceOf(Error);
    expect(failed!.message).toContain("token refused: [redacted]");
    expect(failed!.message).not.toContain("upstream-secret");
    const logged = await getDb().select().from(events);
    expect(JSON.stringify(logged)).not.toContain("upstream-secret");
  });
});
