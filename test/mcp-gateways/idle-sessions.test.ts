import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import {
  endIdleSessions,
  openHostedSessions,
  serveGatewayRequest,
} from "@/lib/mcp-gateways/hosted-sessions";
import { OPERATOR } from "@/lib/queues/queue-access";
import { startEverything, type EverythingHost } from "@/test/mcp-gateway/everything-host";
import { makeQuickTeam } from "@/test/support/api-fixtures";
import { freshDatabase } from "@/test/support/database";

// Issue 25, item 6: a hosted gateway's sessions are cleaned up when their agent goes quiet. Served
// in this process (the route's own function, no HTTP server), so the idle sweep can be run at a
// chosen time: a session is ended after 15 minutes without a request, not before.

let everything: EverythingHost;
let agentKey: string;
const saved = process.env.CALLBACK_ALLOWED_HOSTS;

beforeAll(async () => {
  await freshDatabase("mcp-gateways-idle");
  // the reference server listens on loopback, which upstream URLs may not name unless allowed
  process.env.CALLBACK_ALLOWED_HOSTS = "127.0.0.1";
  everything = await startEverything();
  const team = await makeQuickTeam();
  agentKey = team.agent.key;
  await createMcpGateway(OPERATOR, { name: "idle", url: everything.url, agents: [team.agent.id] });
}, 30_000);
afterAll(async () => {
  await endIdleSessions(Number.MAX_SAFE_INTEGER);
  await everything?.close();
  if (saved === undefined) delete process.env.CALLBACK_ALLOWED_HOSTS;
  else process.env.CALLBACK_ALLOWED_HOSTS = saved;
});

const MINUTE = 60_000;

function post(body: unknown, sessionId?: string) {
  return serveGatewayRequest(
    new Request("http://countersign.test/api/mcp/gateways/idle", {
      method: "POST",
      headers: {
        authorization: `Bearer ${agentKey}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" } : {}),
      },
      body: JSON.stringify(body),
    }),
    "idle",
  );
}

describe("an idle hosted session", () => {
  it("is ended after 15 minutes without a request, and its id is then answered 404", async () => {
    const before = openHostedSessions();
    const opened = await post({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "idle-test", version: "1" },
      },
    });
    expect(opened.status).toBe(200);
    expect(await opened.text()).toContain("mcp-servers/everything");
    const sessionId = opened.headers.get("mcp-session-id")!;
    expect(sessionId).toBeTruthy();
    expect(openHostedSessions()).toBe(before + 1);

    expect(await endIdleSessions(Date.now() + 14 * MINUTE)).toBe(0);
    expect(openHostedSessions()).toBe(before + 1);
    expect(await endIdleSessions(Date.now() + 16 * MINUTE)).toBe(1);
    expect(openHostedSessions()).toBe(before);

    await expect(post({ jsonrpc: "2.0", id: 2, method: "ping" }, sessionId)).rejects.toMatchObject({
      status: 404,
      code: "not_found",
    });
  });
});
