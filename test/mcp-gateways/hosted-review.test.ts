import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { mcpGateways } from "@/db/schema";
import { toResponse } from "@/lib/errors";
import { createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import { disableMcpGateway } from "@/lib/mcp-gateways/disable-mcp-gateway";
import {
  endIdleSessions,
  endStaleSessions,
  openHostedSessions,
  serveGatewayRequest,
} from "@/lib/mcp-gateways/hosted-sessions";
import { OWN_API_BASE, ownApiFetch } from "@/lib/mcp-gateways/own-api-fetch";
import { OPERATOR } from "@/lib/queues/queue-access";
import {
  startEverything,
  startMcpHost,
  type EverythingHost,
} from "@/test/mcp-gateway/everything-host";
import { makeQuickTeam } from "@/test/support/api-fixtures";
import { freshDatabase } from "@/test/support/database";
import { makeAgentKey } from "@/test/support/factories";
import { sleep, waitUntil } from "@/test/support/polling";

// The security review of the hosted gateways (M1, M2, M3, L3, L10), each reproduced: served in
// this process (the route's own function), the agent's API calls through the in-process fetch
// without a hosted gateway's mark, as any request from outside.

let everything: EverythingHost;
let noisy: EverythingHost;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;
let outsiderKey: string;
const saved = process.env.CALLBACK_ALLOWED_HOSTS;
const open: Client[] = [];
const MINUTE = 60_000;

/** an upstream that sends its client a log line on its own, 800 ms after it was initialized */
function noisyServer() {
  const server = new Server({ name: "noisy", version: "1" }, { capabilities: { logging: {} } });
  server.oninitialized = () =>
    setTimeout(
      () =>
        void server
          .notification({
            method: "notifications/message",
            params: { level: "info", data: "tick" },
          })
          .catch(() => {}),
      800,
    );
  return { server, cleanup: () => {} } as unknown as Parameters<
    typeof startMcpHost
  >[0] extends () => infer R
    ? R
    : never;
}

beforeAll(async () => {
  await freshDatabase("mcp-gateways-review");
  process.env.CALLBACK_ALLOWED_HOSTS = "127.0.0.1";
  everything = await startEverything();
  noisy = await startMcpHost(noisyServer);
  team = await makeQuickTeam();
  outsiderKey = (await makeAgentKey({ name: "Outsider bot", queues: [team.queue.name] })).key;
  for (const [name, url] of [
    ["prod-db", everything.url],
    ["noisy", noisy.url],
    ["spare", noisy.url],
  ] as const)
    await createMcpGateway(OPERATOR, { name, url, agents: [team.agent.id] });
}, 30_000);
afterAll(async () => {
  await Promise.all(open.map((client) => client.close().catch(() => {})));
  await endIdleSessions(Number.MAX_SAFE_INTEGER);
  await everything?.close();
  await noisy?.close();
  if (saved === undefined) delete process.env.CALLBACK_ALLOWED_HOSTS;
  else process.env.CALLBACK_ALLOWED_HOSTS = saved;
});

/** The REST API as a client outside the server would reach it. */
async function api(token: string, method: string, path: string, body?: unknown) {
  const response = await ownApiFetch(null)(`${OWN_API_BASE}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() };
}

const serve = (name: string) => (url: string | URL, init?: RequestInit) =>
  serveGatewayRequest(new Request(url, init), name).catch(toResponse);

async function connect(name: string, key = team.agent.key) {
  const client = new Client({ name: "review-client", version: "1" });
  open.push(client);
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`http://countersign.test/api/mcp/gateways/${name}`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: serve(name),
    }),
  );
  return client;
}

function initialize(name: string, key: string) {
  return serve(name)(`http://countersign.test/api/mcp/gateways/${name}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "review", version: "1" },
      },
    }),
  });
}

type Card = { id: string; revision: number; args: Record<string, unknown>; status: string };

async function pendingCard(message: string, not?: string): Promise<Card> {
  return waitUntil(
    async () => {
      const queue = await api(
        team.reviewer.token,
        "GET",
        `/queue?queue=${team.queue.id}&status=pending`,
      );
      return (queue.body.batches as { calls: Card[] }[])
        .map((b) => b.calls[0]!)
        .find((c) => c.args.message === message && c.id !== not);
    },
    { timeoutMs: 15_000, what: `the card for ${message}` },
  );
}

const approve = (card: Card) =>
  api(team.reviewer.token, "POST", `/calls/${card.id}/decision`, {
    outcome: "approve",
    expectedRevision: card.revision,
  });

describe("hosted gateways after the security review", () => {
  it("M1: never picks up a card the agent wrote itself under the gateway's name", async () => {
    const run = await api(team.agent.key, "POST", "/runs", {});
    expect(run.status).toBe(201);
    const reserved = await api(team.agent.key, "POST", `/runs/${run.body.id}/gated-calls`, {
      gateway: "hosted:anything",
      toolCallId: "t0",
      toolName: "echo",
      args: { message: "m1" },
    });
    expect(reserved.status).toBe(400);
    const forged = await api(team.agent.key, "POST", `/runs/${run.body.id}/gated-calls`, {
      gateway: "prod-db",
      toolCallId: "t1",
      toolName: "echo",
      args: { message: "m1" },
      summary: "harmless health check",
      metadata: { mcp: { description: "SELECT 1", annotations: { readOnlyHint: true } } },
    });
    expect(forged.status, JSON.stringify(forged.body)).toBe(201);
    const card = await pendingCard("m1");
    expect((await approve(card)).status).toBe(200);

    const client = await connect("prod-db");
    let settled = false;
    const answer = client
      .callTool({ name: "echo", arguments: { message: "m1" } }, undefined, { timeout: 60_000 })
      .finally(() => (settled = true));
    // its own card, waiting for a person: the forged approval is not used
    const own = await pendingCard("m1", card.id);
    await sleep(300);
    expect(settled).toBe(false);
    expect((await approve(own)).status).toBe(200);
    const result = (await answer) as CallToolResult;
    expect(JSON.stringify(result.content)).toContain("Echo: m1");
  }, 60_000);

  it("L10: answers a key not allowed on the gateway as an unknown gateway (404)", async () => {
    const refused = await initialize("prod-db", outsiderKey);
    expect(refused.status).toBe(404);
    expect((await refused.json()).error.code).toBe("not_found");
  });

  it("M2: never forwards a waiting call once the gateway was disabled meanwhile", async () => {
    const client = await connect("prod-db");
    const answer = client
      .callTool({ name: "echo", arguments: { message: "m2" } }, undefined, { timeout: 60_000 })
      .then(
        (result) => JSON.stringify((result as CallToolResult).content),
        (error: Error) => error.message,
      );
    const card = await pendingCard("m2");
    // as another instance would: the row changes, nothing here is told
    const [before] = await getDb()
      .select()
      .from(mcpGateways)
      .where(eq(mcpGateways.name, "prod-db"));
    await getDb()
      .update(mcpGateways)
      .set({ status: "disabled", revision: sql`${mcpGateways.revision} + 1` })
      .where(eq(mcpGateways.id, before!.id));
    try {
      expect((await approve(card)).status).toBe(200);
      const text = await answer;
      expect(text).not.toContain("Echo: m2");
      expect(text).toContain("disabled");
      // the sweeper's re-check ends it (and the sessions on the gateway's older revision)
      expect(await endStaleSessions()).toBeGreaterThanOrEqual(1);
    } finally {
      await getDb()
        .update(mcpGateways)
        .set({ status: "enabled", revision: sql`${mcpGateways.revision} + 1` })
        .where(eq(mcpGateways.id, before!.id));
    }
  }, 60_000);

  it("M2: disabling a gateway in this process ends its sessions at once", async () => {
    await connect("spare");
    const before = openHostedSessions();
    const [spare] = await getDb().select().from(mcpGateways).where(eq(mcpGateways.name, "spare"));
    await disableMcpGateway(OPERATOR, spare!.id);
    await waitUntil(async () => openHostedSessions() === before - 1, {
      timeoutMs: 10_000,
      what: "the session ended",
    });
  }, 30_000);

  it("L3: racing initializes do not get past the 32-session cap", async () => {
    const racer = await makeAgentKey({ name: "Racer bot", queues: [team.queue.name] });
    const [gateway] = await getDb().select().from(mcpGateways).where(eq(mcpGateways.name, "noisy"));
    await getDb().run(
      sql`insert into mcp_gateway_agents (gateway_id, agent_key_id) values (${gateway!.id}, ${racer.id})`,
    );
    const before = openHostedSessions();
    const answers = await Promise.all(
      Array.from({ length: 36 }, () => initialize("noisy", racer.key)),
    );
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(32);
    expect(statuses).toContain(429);
    expect(openHostedSessions() - before).toBeLessThanOrEqual(32);
  }, 60_000);

  it("M3: a session the upstream keeps talking to still goes idle", async () => {
    await endIdleSessions(Number.MAX_SAFE_INTEGER);
    const opened = await initialize("noisy", team.agent.key);
    expect(opened.status).toBe(200);
    await opened.text();
    const sessionId = opened.headers.get("mcp-session-id")!;
    const initialized = await serve("noisy")(`http://countersign.test/api/mcp/gateways/noisy`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${team.agent.key}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": sessionId,
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    expect(initialized.status).toBe(202);
    const lastRequest = Date.now();
    await sleep(1_500); // the upstream's log line went out meanwhile
    expect(await endIdleSessions(lastRequest + 15 * MINUTE + 1)).toBe(1);
    expect(openHostedSessions()).toBe(0);
  }, 30_000);
});

describe("an idle sweep", () => {
  it("keeps a session whose call waits for a person, however long", async () => {
    await endIdleSessions(Number.MAX_SAFE_INTEGER);
    const client = await connect("prod-db");
    const answer = client.callTool({ name: "echo", arguments: { message: "m3" } }, undefined, {
      timeout: 60_000,
    });
    const card = await pendingCard("m3");
    expect(await endIdleSessions(Date.now() + 60 * MINUTE)).toBe(0);
    expect((await approve(card)).status).toBe(200);
    expect(JSON.stringify(((await answer) as CallToolResult).content)).toContain("Echo: m3");
    // answered, it may go idle
    expect(await endIdleSessions(Date.now() + 16 * MINUTE)).toBe(1);
  }, 30_000);
});
