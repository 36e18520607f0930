import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { runs } from "@/db/schema";
import {
  direct,
  filesystemRoot,
  FILESYSTEM_SERVER,
  GATEWAY_BIN,
  type Connected,
} from "@/test/mcp-gateway/gateway-process";
import { makeQuickTeam, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";

// `--listen 127.0.0.1:PORT`: the gateway serves MCP clients over streamable HTTP at /mcp, each
// client session with its own upstream (server-filesystem) and its own run, gated the same way.

let server: TestServer;
let gateway: ChildProcess;
let mcpUrl: URL;
let stderr = "";
let team: Awaited<ReturnType<typeof makeQuickTeam>>;
const root = filesystemRoot();
const clients: Client[] = [];
let itself: Connected;

beforeAll(async () => {
  server = await startApiServer("mcp-gateway-listen");
  team = await makeQuickTeam();
  const lead = await makeReviewer({ queues: [{ name: team.queue.name, role: "lead" }] });
  const leadApi = apiClient(server.baseUrl, lead.token);
  for (const rule of [
    { name: "reads", effect: "allow", toolPattern: "files.read_*" },
    { name: "no moves", effect: "deny", toolPattern: "files.move_file", reason: "No moves." },
  ]) {
    expect((await leadApi.post("/policy-rules", { queue: team.queue.name, ...rule })).status).toBe(
      201,
    );
  }
  gateway = spawn(
    process.execPath,
    [
      GATEWAY_BIN,
      "--url",
      server.baseUrl,
      "--key",
      team.agent.key,
      "--name",
      "files",
      "--listen",
      "127.0.0.1:0",
      "--",
      process.execPath,
      FILESYSTEM_SERVER,
      root,
    ],
    {
      stdio: ["ignore", "ignore", "pipe"],
      // its outcome spool (lib/mcp-gateway/spool.ts) in a folder of the test's own
      env: { ...process.env, XDG_STATE_HOME: mkdtempSync(join(tmpdir(), "countersign-state-")) },
    },
  );
  gateway.stderr!.on("data", (chunk) => (stderr += chunk));
  const url = await waitUntil(() => /listening on (http:\S+)/.exec(stderr)?.[1], {
    timeoutMs: 10_000,
    what: "the gateway to listen",
  });
  mcpUrl = new URL(url);
  itself = await direct(root);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await itself?.close();
  if (gateway && gateway.exitCode === null) {
    const exited = new Promise((resolve) => gateway.once("exit", resolve));
    gateway.kill("SIGTERM");
    await exited;
  }
  await server?.stop();
});

async function connect(name: string) {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl));
  clients.push(client);
  return client;
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

describe("--listen", () => {
  it("listens on loopback at /mcp", () => {
    expect(mcpUrl.hostname).toBe("127.0.0.1");
    expect(mcpUrl.pathname).toBe("/mcp");
  });

  it("serves each client session its own upstream and run, gated as over stdio", async () => {
    const first = await connect("first-client");
    const second = await connect("second-client");
    expect(await first.listTools()).toEqual(await itself.client.listTools());
    expect(first.getServerVersion()).toEqual(itself.client.getServerVersion());

    writeFileSync(join(root, "shared.txt"), "over http");
    for (const client of [first, second]) {
      const read = (await client.callTool({
        name: "read_text_file",
        arguments: { path: join(root, "shared.txt") },
      })) as CallToolResult;
      expect(textOf(read)).toBe("over http");
    }
    const moved = (await second.callTool({
      name: "move_file",
      arguments: { source: join(root, "shared.txt"), destination: join(root, "gone.txt") },
    })) as CallToolResult;
    expect(moved.isError).toBe(true);
    expect(textOf(moved)).toContain("No moves.");

    const made = await getDb().select().from(runs).where(eq(runs.agentKeyId, team.agent.id));
    expect(
      made.map((run) => (run.metadata as { mcp: { client: string } }).mcp.client).sort(),
    ).toEqual(["first-client", "second-client"]);

    // A client that ends its session (DELETE) ends its run.
    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    await waitUntil(
      async () => {
        const [run] = await getDb()
          .select()
          .from(runs)
          .where(
            eq(runs.id, made.find((r) => (r.metadata as any).mcp.client === "first-client")!.id),
          );
        return run?.status === "completed";
      },
      { timeoutMs: 10_000, what: "the first client's run to complete" },
    );
  }, 60_000);

  it("a call whose client stopped listening leaves its decision for the identical call of the client's next session", async () => {
    const reviewer = apiClient(server.baseUrl, team.reviewer.token);
    const path = join(root, "left-behind.txt");
    const args = { path, content: "written once" };
    const leaving = await connect("leaving-client");
    const waiting = leaving.callTool({ name: "write_file", arguments: args }, undefined, {
      onprogress: () => {},
      timeout: 60_000,
    });
    waiting.catch(() => {});
    const card = await waitUntil(
      async () =>
        (await reviewer.get(`/queue?queue=${team.queue.id}&status=pending`)).body.batches?.find(
          (b: { calls: { args: { path?: string } }[] }) => b.calls[0]?.args.path === path,
        ),
      { timeoutMs: 15_000, what: "the card" },
    );
    // The client goes away without cancelling (its stream closes); the reviewer approves later.
    await leaving.close();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const decided = await reviewer.post(`/calls/${card.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: card.calls[0].revision,
    });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(existsSync(path)).toBe(false); // the session nobody listens to did not use it

    const back = await connect("returning-client");
    const result = (await back.callTool({ name: "write_file", arguments: args }, undefined, {
      timeout: 15_000,
    })) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe("written once");
  }, 60_000);

  it("refuses a request without a session that is not initialize", async () => {
    const response = await fetch(mcpUrl, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(400);
  });
});
