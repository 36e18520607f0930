import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { startEverything, type EverythingHost } from "@/test/mcp-gateway/everything-host";
import { makeQuickTeam } from "@/test/support/api-fixtures";
import { freshDatabase } from "@/test/support/database";
import { makeQueue, makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { sleep, waitUntil } from "@/test/support/polling";
import { startServer, type TestServer } from "@/test/support/server";

// Issue 25, hosted sessions across instances: two production servers over one database file, as
// behind a load balancer that does not route by Mcp-Session-Id. A hosted MCP session lives in
// the instance that opened it (lib/mcp-gateways/hosted-sessions.ts says why); any other answers
// a request for it 404, as MCP's streamable HTTP transport prescribes, and the client initializes
// again there. Nothing decided is lost: the identical call after that is answered from the
// decision, once, whether the first instance died or lives on.

const UPSTREAM_TOKEN = "Bearer instances-upstream-secret";

let first: TestServer;
let second: TestServer;
let everything: EverythingHost;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;
let reviewer: ApiClient;
const open: Client[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase("mcp-gateways-instances");
  [first, second] = await Promise.all([startServer({ databaseUrl }), startServer({ databaseUrl })]);
  everything = await startEverything({ requireHeaders: { Authorization: UPSTREAM_TOKEN } });
  team = await makeQuickTeam();
  reviewer = apiClient(second.baseUrl, team.reviewer.token);
  const adminQueue = await makeQueue();
  const admin = apiClient(
    first.baseUrl,
    (await makeReviewer({ queues: [{ name: adminQueue.name, role: "admin" }] })).token,
  );
  const created = await admin.post("/mcp-gateways", {
    name: "shared",
    url: everything.url,
    // a loopback upstream may take its credential over plain http
    headers: { Authorization: UPSTREAM_TOKEN },
    agents: [team.agent.id],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
}, 90_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close().catch(() => {})));
  await everything?.close();
  await Promise.all([first?.stop(), second?.stop()]);
});

async function connect(server: TestServer) {
  const client = new Client({ name: "instances-test-client", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(
    new URL(`${server.baseUrl}/api/mcp/gateways/shared`),
    { requestInit: { headers: { Authorization: `Bearer ${team.agent.key}` } } },
  );
  open.push(client);
  await client.connect(transport);
  return { client, transport };
}

/** A request of an existing session, POSTed to `server` by hand to read the HTTP status. */
async function ping(server: TestServer, sessionId: string) {
  const response = await fetch(`${server.baseUrl}/api/mcp/gateways/shared`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${team.agent.key}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 42, method: "ping" }),
  });
  await response.body?.cancel();
  return response.status;
}

/** Calls echo, keeping the client waiting (a progress token) as a long wait would. */
const echo = (client: Client, message: string, timeout = 60_000) =>
  client.callTool({ name: "echo", arguments: { message } }, undefined, {
    onprogress: () => {},
    timeout,
    resetTimeoutOnProgress: true,
  }) as Promise<CallToolResult>;

async function cards(status: "pending" | "all") {
  const queue = await reviewer.get(`/queue?queue=${team.queue.id}&status=${status}`);
  return (queue.body.batches ?? []) as {
    id: string;
    runId: string;
    status: string;
    calls: { id: string; revision: number; args: { message?: string } }[];
  }[];
}

async function cardFor(message: string) {
  return waitUntil(
    async () => (await cards("pending")).find((c) => c.calls[0]?.args.message === message),
    { timeoutMs: 15_000, what: `the card of '${message}'` },
  );
}

async function approve(card: Awaited<ReturnType<typeof cardFor>>) {
  const [call] = card.calls;
  const decided = await reviewer.post(`/calls/${call!.id}/decision`, {
    outcome: "approve",
    expectedRevision: call!.revision,
  });
  expect(decided.status, JSON.stringify(decided.body)).toBe(200);
}

const eventsOf = (callId: string, type: string) =>
  getDb()
    .select()
    .from(events)
    .where(and(eq(events.callId, callId), eq(events.type, type)));

const textOf = (result: CallToolResult) => JSON.stringify(result.content);

describe("hosted sessions on two instances over one database", () => {
  it("a session is answered 404 by the instance that does not hold it; after initializing there, the identical call is answered from the decision made meanwhile, and the first instance never uses it", async () => {
    const message = "moved to another instance";
    const onFirst = await connect(first);
    const waiting = echo(onFirst.client, message);
    waiting.catch(() => {});
    const card = await cardFor(message);
    const sessionId = onFirst.transport.sessionId!;
    expect(await ping(first, sessionId)).toBe(200);
    expect(await ping(second, sessionId)).toBe(404); // MCP: initialize again

    // The client moves on (its load balancer now sends it to the second instance): its request
    // stream to the first closes, without a cancellation, and the reviewer decides meanwhile.
    await onFirst.client.close();
    await expect(waiting).rejects.toThrow();
    await sleep(1_000);
    await approve(card);
    await sleep(1_000);
    expect(await eventsOf(card.calls[0]!.id, "call.used")).toHaveLength(0); // nobody to answer

    const onSecond = await connect(second);
    const result = await echo(onSecond.client, message, 15_000);
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain(`Echo: ${message}`);
    expect(textOf(result)).not.toContain("instances-upstream-secret");
    // one card, its decision used once, one outcome
    expect((await cards("all")).filter((c) => c.calls[0]?.args.message === message)).toHaveLength(
      1,
    );
    await waitUntil(async () => (await eventsOf(card.calls[0]!.id, "tool.completed")).length > 0, {
      what: "the outcome report",
    });
    expect(await eventsOf(card.calls[0]!.id, "call.used")).toHaveLength(1);
  }, 90_000);

  it("when the instance holding a waiting call dies, the identical call on another instance waits on the same card and is answered from its decision", async () => {
    const message = "instance killed";
    const onFirst = await connect(first);
    const waiting = echo(onFirst.client, message);
    waiting.catch(() => {});
    const card = await cardFor(message);
    const sessionId = onFirst.transport.sessionId!;
    await first.kill();
    // the client's transport reports the lost stream; the client gives that session up
    await onFirst.client.close();
    await expect(waiting).rejects.toThrow();
    expect(await ping(second, sessionId)).toBe(404);
    expect((await cards("pending")).map((c) => c.id)).toContain(card.id); // nothing lost

    const onSecond = await connect(second);
    const answer = echo(onSecond.client, message);
    await sleep(1_000);
    expect((await cards("pending")).filter((c) => c.calls[0]?.args.message === message)).toEqual([
      expect.objectContaining({ id: card.id }),
    ]); // it waits on the same card: no second one
    await approve(card);
    const result = await answer;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain(`Echo: ${message}`);
    expect(await eventsOf(card.calls[0]!.id, "call.used")).toHaveLength(1);
  }, 90_000);
});
