import { and, desc, eq } from "drizzle-orm";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, runs } from "@/db/schema";
import { gatewayInFrontOf, type Connected } from "@/test/mcp-gateway/gateway-process";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";

// Issue 25's faults on the upstream side: a server that exits mid-call, one that never answers and
// one that answers garbage each give the MCP client a clear error, and the call's run records
// `tool.failed`. The upstream is a hand-written broken server; an allow rule lets every call through.

const FAULTY = join(process.cwd(), "test", "mcp-gateway", "faulty-server.mjs");

let server: TestServer;
const open: Connected[] = [];

beforeAll(async () => {
  // A small body limit, so an oversized call is cheap to make.
  server = await startApiServer("mcp-gateway-faults", { MAX_BODY_BYTES: String(64 * 1024) });
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((connected) => connected.close().catch(() => {})));
  await server?.stop();
});

async function gatewayToFaulty() {
  const t = await makeQuickTeam();
  const lead = await makeReviewer({ queues: [{ name: t.queue.name, role: "lead" }] });
  const rule = await apiClient(server.baseUrl, lead.token).post("/policy-rules", {
    queue: t.queue.name,
    name: "anything goes",
    effect: "allow",
    toolPattern: "*",
  });
  expect(rule.status).toBe(201);
  const gateway = await gatewayInFrontOf({
    countersignUrl: server.baseUrl,
    agentKey: t.agent.key,
    upstream: [process.execPath, FAULTY],
    extra: ["--upstream-timeout", "1"],
  });
  open.push(gateway);
  return { ...t, gateway, mcp: gateway.client };
}

/** The agent's run (the gateway made one) once it holds an event of `type`. */
async function runWith(agentKeyId: string, type: string) {
  return waitUntil(
    async () => {
      const db = getDb();
      const [run] = await db
        .select()
        .from(runs)
        .where(eq(runs.agentKeyId, agentKeyId))
        .orderBy(desc(runs.createdAt));
      if (!run) return null;
      const found = await db
        .select()
        .from(events)
        .where(and(eq(events.runId, run.id), eq(events.type, type)));
      return found.length > 0 ? { run, events: found } : null;
    },
    { timeoutMs: 10_000, what: `a run with ${type}` },
  );
}

describe("oversized arguments", () => {
  it("are refused with the contract's limit, never truncated or forwarded", async () => {
    const { mcp, agent } = await gatewayToFaulty();
    const result = (await mcp.callTool({
      name: "echo",
      arguments: { blob: "x".repeat(100_000) },
    })) as { isError?: boolean; content: { type: string; text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(
      /^Countersign could not be asked for approval: .*\(HTTP 413 payload_too_large\)\. The call was not forwarded to the tool; nothing ran\.$/s,
    );
    // nothing reached the server: no call of the run was completed
    const db = getDb();
    const [run] = await db.select().from(runs).where(eq(runs.agentKeyId, agent.id));
    const reported = run
      ? await db
          .select()
          .from(events)
          .where(and(eq(events.runId, run.id), eq(events.type, "tool.completed")))
      : [];
    expect(reported).toEqual([]);
  });
});

describe("upstream faults", () => {
  it("passes a healthy call through (the allow rule works)", async () => {
    const { mcp, agent } = await gatewayToFaulty();
    const result = await mcp.callTool({ name: "echo", arguments: { said: "hi" } });
    expect(result.content).toEqual([{ type: "text", text: '{"said":"hi"}' }]);
    await runWith(agent.id, "tool.completed");
  });

  it("a server that never answers: a timeout error, tool.failed, and the gateway goes on", async () => {
    const { mcp, agent } = await gatewayToFaulty();
    await expect(mcp.callTool({ name: "hang", arguments: {} })).rejects.toThrow(
      "The upstream MCP server did not answer tools/call hang within 1 s.",
    );
    const { events: failed } = await runWith(agent.id, "tool.failed");
    expect(JSON.stringify(failed[0]!.data)).toContain("did not answer tools/call hang");
    const after = await mcp.callTool({ name: "echo", arguments: { still: "here" } });
    expect(after.content).toEqual([{ type: "text", text: '{"still":"here"}' }]);
  });

  it("a server that answers garbage: a clear error and tool.failed", async () => {
    const { mcp, agent } = await gatewayToFaulty();
    await expect(mcp.callTool({ name: "garbage", arguments: {} })).rejects.toThrow(
      /The upstream MCP server answered tools\/call with something that is not a tool result/,
    );
    await runWith(agent.id, "tool.failed");
  });

  it("a server that exits mid-call: a clear error, tool.failed, and the run ends failed", async () => {
    const { mcp, agent } = await gatewayToFaulty();
    await expect(mcp.callTool({ name: "crash", arguments: {} })).rejects.toThrow(
      "The upstream MCP server exited or closed the connection.",
    );
    await runWith(agent.id, "tool.failed");
    const { run } = await runWith(agent.id, "run.failed");
    expect(run.status).toBe("failed");
  });
});
