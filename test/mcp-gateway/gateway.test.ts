import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeQuickTeam, rowsOf, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import { freePort, type TestServer } from "@/test/support/server";
import {
  direct,
  filesystemRoot,
  throughGateway,
  type Connected,
} from "@/test/mcp-gateway/gateway-process";

// Issue 25's gate, end to end: the official MCP client talks over stdio to the gateway's bin (a
// child process), which sits in front of the real @modelcontextprotocol/server-filesystem (its
// child) and asks a real Countersign server about every tools/call. Reviewers decide through the
// API meanwhile; what lands on disk is the proof of what was forwarded.

let server: TestServer;
const open: Connected[] = [];

beforeAll(async () => {
  server = await startApiServer("mcp-gateway");
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((connected) => connected.close().catch(() => {})));
  await server?.stop();
});

/** A queue with a reviewer and a lead, an agent key, and the MCP client through the gateway. */
async function team(options: { roots?: string[]; extra?: string[] } = {}) {
  const t = await makeQuickTeam();
  const lead = await makeReviewer({
    name: "Lee Lead",
    queues: [{ name: t.queue.name, role: "lead" }],
  });
  const root = filesystemRoot();
  const gateway = await throughGateway({
    countersignUrl: server.baseUrl,
    agentKey: t.agent.key,
    root,
    name: "filesystem",
    roots: options.roots,
    extra: options.extra,
  });
  open.push(gateway);
  return {
    ...t,
    root,
    gateway,
    mcp: gateway.client,
    reviewerApi: apiClient(server.baseUrl, t.reviewer.token),
    leadApi: apiClient(server.baseUrl, lead.token),
    agentApi: apiClient(server.baseUrl, t.agent.key),
  };
}

function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");
}

/** The one pending batch of the queue, once the gateway's card reaches the reviewers. */
async function pendingCard(reviewer: ApiClient, queueId: string) {
  return waitUntil(
    async () => {
      const answer = await reviewer.get(`/queue?queue=${queueId}&status=pending`);
      return answer.body.batches?.[0] ?? null;
    },
    { timeoutMs: 15_000, what: "the gateway's card in the queue" },
  );
}

async function addRule(lead: ApiClient, queue: string, rule: Record<string, unknown>) {
  const answer = await lead.post("/policy-rules", { queue, ...rule });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
}

describe("transparency", () => {
  it("lists the same tools, server info, capabilities and instructions as the server itself", async () => {
    const { mcp, root } = await team();
    const itself = await direct(root);
    open.push(itself);
    expect(await mcp.listTools()).toEqual(await itself.client.listTools());
    expect(mcp.getServerVersion()).toEqual(itself.client.getServerVersion());
    expect(mcp.getServerCapabilities()).toEqual(itself.client.getServerCapabilities());
    expect(mcp.getInstructions()).toEqual(itself.client.getInstructions());
    await expect(mcp.ping()).resolves.toEqual({});
    // an unknown method is the upstream's answer too
    await expect(mcp.listPrompts()).rejects.toThrow(/Method not found/);
  });
});

describe("the gate", () => {
  it("holds a write until a reviewer edits it, then writes exactly the edited content", async () => {
    const { mcp, root, reviewerApi, queue, agentApi } = await team();
    const path = join(root, "notes.txt");
    const progress: Progress[] = [];
    const call = mcp.callTool(
      { name: "write_file", arguments: { path, content: "draft from the model" } },
      undefined,
      { onprogress: (p) => progress.push(p), timeout: 60_000, resetTimeoutOnProgress: true },
    );
    call.catch(() => {}); // awaited below; a failed assertion before then must not leave it unhandled

    const card = await pendingCard(reviewerApi, queue.id);
    const [asked] = card.calls;
    expect(asked).toMatchObject({
      toolName: "write_file",
      args: { path, content: "draft from the model" },
      metadata: {
        mcp: { server: "filesystem", tool: "filesystem.write_file", client: "gateway-test-client" },
      },
    });
    // the tool's title, the server and client, and its description
    expect(asked.summary).toMatch(
      /^Write File via MCP server 'filesystem', client gateway-test-client: Create a new file/,
    );
    expect(asked.inputSchema.properties).toHaveProperty("content");
    expect(existsSync(path)).toBe(false);
    // The client heard who is asked and where.
    await waitUntil(() => progress.length > 0, { what: "a progress notification" });
    expect(progress[0]!.message).toBe(
      `Waiting for approval in queue '${queue.name}' on Countersign: ${card.reviewUrl}`,
    );

    // The tool's schema came along: an edit that breaks it is refused.
    const bad = await reviewerApi.post(`/calls/${asked.id}/decision`, {
      outcome: "edit",
      expectedRevision: asked.revision,
      editedArgs: { path, content: 42 },
    });
    expect(bad.status).toBe(400);
    const edited = await reviewerApi.post(`/calls/${asked.id}/decision`, {
      outcome: "edit",
      expectedRevision: asked.revision,
      editedArgs: { path, content: "reviewed text" },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);

    const result = (await call) as CallToolResult;
    expect(result.isError).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe("reviewed text");
    expect(textOf(result)).toContain("Dana Reviewer changed 'content' before approving");

    // The run: one per session, the batch its own, the upstream's answer reported on it.
    const run = (await agentApi.get(`/runs/${card.runId}`)).body;
    expect(run.metadata).toMatchObject({
      via: "countersign-mcp-gateway",
      mcp: { server: "filesystem", client: "gateway-test-client", clientVersion: "1.2.3" },
    });
    const rows = await waitUntil(async () => {
      const now = await rowsOf(card.runId);
      return now.events.some((e) => e.type === "tool.completed") ? now : null;
    });
    expect(rows.events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        "run.created",
        "batch.created",
        "call.decided",
        "call.used",
        "tool.completed",
      ]),
    );
  }, 60_000);

  it("a rejection writes nothing and tells the model the reviewer's reason", async () => {
    const { mcp, root, reviewerApi, queue } = await team();
    const path = join(root, "rejected.txt");
    const call = mcp.callTool({ name: "write_file", arguments: { path, content: "nope" } });
    call.catch(() => {});
    const card = await pendingCard(reviewerApi, queue.id);
    const decided = await reviewerApi.post(`/calls/${card.calls[0].id}/decision`, {
      outcome: "reject",
      expectedRevision: card.calls[0].revision,
      reason: "Not in the release folder.",
    });
    expect(decided.status).toBe(200);
    const result = (await call) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "The reviewer, Dana Reviewer, rejected this call: Not in the release folder. The tool was not run.",
    );
    expect(existsSync(path)).toBe(false);
  }, 60_000);

  it("a deny rule on filesystem.move_* blocks a move before any reviewer sees it", async () => {
    const { mcp, root, reviewerApi, leadApi, queue } = await team();
    await addRule(leadApi, queue.name, {
      name: "files stay put",
      effect: "deny",
      toolPattern: "filesystem.move_*",
      reason: "Moving files is not allowed here.",
    });
    const source = join(root, "a.txt");
    writeFileSync(source, "stays");
    const result = (await mcp.callTool({
      name: "move_file",
      arguments: { source, destination: join(root, "b.txt") },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Moving files is not allowed here.");
    expect(existsSync(source)).toBe(true);
    expect(existsSync(join(root, "b.txt"))).toBe(false);
    const pending = await reviewerApi.get(`/queue?queue=${queue.id}&status=pending`);
    expect(pending.body.batches).toEqual([]);
  }, 60_000);

  it("an allow rule forwards at once, and the server's own requests to the client pass through", async () => {
    const served = filesystemRoot();
    const { mcp, root, leadApi, queue } = await team({ roots: [served] });
    await addRule(leadApi, queue.name, {
      name: "reads are fine",
      effect: "allow",
      toolPattern: "filesystem.*_allowed_directories",
    });
    await addRule(leadApi, queue.name, { name: "reads", effect: "allow", toolPattern: "read_*" });
    writeFileSync(join(served, "hello.txt"), "hello through the gate");
    // server-filesystem asked the client for its roots (roots/list) through the gateway.
    const listed = await waitUntil(
      async () => {
        const result = (await mcp.callTool({
          name: "list_allowed_directories",
          arguments: {},
        })) as CallToolResult;
        return textOf(result).includes(served) ? result : null;
      },
      { what: "the client's roots to reach server-filesystem", timeoutMs: 10_000 },
    );
    expect(textOf(listed)).not.toContain(root);
    const read = (await mcp.callTool({
      name: "read_text_file",
      arguments: { path: join(served, "hello.txt") },
    })) as CallToolResult;
    expect(read.isError).toBeFalsy();
    expect(textOf(read)).toBe("hello through the gate");
  }, 60_000);

  it("a cancelled call withdraws its card and writes nothing", async () => {
    const { mcp, root, reviewerApi, queue } = await team();
    const path = join(root, "cancelled.txt");
    const controller = new AbortController();
    const call = mcp.callTool(
      { name: "write_file", arguments: { path, content: "x" } },
      undefined,
      {
        signal: controller.signal,
      },
    );
    const card = await pendingCard(reviewerApi, queue.id);
    controller.abort("the user pressed Esc");
    await expect(call).rejects.toThrow();
    const withdrawn = await waitUntil(
      async () => {
        const batch = (await reviewerApi.get(`/batches/${card.id}`)).body;
        return batch.status === "cancelled" ? batch : null;
      },
      { timeoutMs: 10_000, what: "the card to be withdrawn" },
    );
    expect(withdrawn.cancelReason).toBe("The MCP client cancelled the tool call.");
    expect(existsSync(path)).toBe(false);
  }, 60_000);
});

describe("long waits", () => {
  it("answers 'awaiting approval, call again' in time, keeps the card, and the identical call picks up the decision once", async () => {
    const { mcp, root, reviewerApi, queue, gateway } = await team({
      extra: ["--answer-within", "1"],
    });
    const path = join(root, "later.txt");
    const args = { path, content: "after lunch" };
    const first = (await mcp.callTool({ name: "write_file", arguments: args })) as CallToolResult;
    expect(first.isError).toBe(true);
    const card = await pendingCard(reviewerApi, queue.id);
    expect(textOf(first)).toBe(
      `This call is awaiting approval in queue '${queue.name}' on Countersign: ${card.reviewUrl} . It has not run. Call write_file again with exactly the same arguments to pick up the decision (it is used once).`,
    );
    expect(existsSync(path)).toBe(false);

    // Asked again before anyone decided: still the same card, still waiting (no second card).
    const again = (await mcp.callTool({
      name: "write_file",
      arguments: { content: "after lunch", path }, // the same arguments, in another order
    })) as CallToolResult;
    expect(textOf(again)).toContain(card.reviewUrl);
    const queued = await reviewerApi.get(`/queue?queue=${queue.id}&status=all`);
    expect(queued.body.batches).toHaveLength(1);

    const approved = await reviewerApi.post(`/calls/${card.calls[0].id}/decision`, {
      outcome: "approve",
      expectedRevision: card.calls[0].revision,
    });
    expect(approved.status).toBe(200);
    await waitUntil(
      async () => (await reviewerApi.get(`/batches/${card.id}`)).body.status === "decided",
    );
    const picked = (await mcp.callTool({ name: "write_file", arguments: args })) as CallToolResult;
    expect(picked.isError).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe("after lunch");

    // Used once: the same call a third time is a new card.
    const third = (await mcp.callTool({ name: "write_file", arguments: args })) as CallToolResult;
    expect(textOf(third)).toMatch(/awaiting approval/);
    const cards = await reviewerApi.get(`/queue?queue=${queue.id}&status=all`);
    expect(cards.body.batches).toHaveLength(2);

    // Another call meanwhile is asked too (calls of a session do not wait for each other).
    const other = (await mcp.callTool({
      name: "write_file",
      arguments: { path: join(root, "other.txt"), content: "x" },
    })) as CallToolResult;
    expect(other.isError).toBe(true);
    expect(textOf(other)).toMatch(/awaiting approval/);
    expect(existsSync(join(root, "other.txt"))).toBe(false);
    const pendingNow = await reviewerApi.get(`/queue?queue=${queue.id}&status=pending`);
    expect(pendingNow.body.batches).toHaveLength(2);

    // The session ends: the cards its client gave up on stay in the queue (an identical call of
    // a later session picks up their decisions: test/mcp-gateway/restart.test.ts).
    await gateway.close();
    // …and the session's run is over, completed.
    await waitUntil(async () => (await rowsOf(card.runId)).run?.status === "completed", {
      timeoutMs: 10_000,
      what: "the session's run to be completed",
    });
    const afterwards = await reviewerApi.get(`/queue?queue=${queue.id}&status=pending`);
    expect(afterwards.body.batches).toHaveLength(2);
  }, 60_000);
});

describe("faults", () => {
  it("fails closed when Countersign cannot be reached: nothing forwarded, the model told why", async () => {
    const t = await makeQuickTeam();
    const root = filesystemRoot();
    const port = await freePort(); // nothing listens there
    const gateway = await throughGateway({
      countersignUrl: `http://127.0.0.1:${port}`,
      agentKey: t.agent.key,
      root,
    });
    open.push(gateway);
    const path = join(root, "never.txt");
    const result = (await gateway.client.callTool({
      name: "write_file",
      arguments: { path, content: "must not be written" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^Countersign could not be asked for approval: .*The call was not forwarded to the tool; nothing ran\.$/s,
    );
    expect(existsSync(path)).toBe(false);
    // everything else still works
    expect((await gateway.client.listTools()).tools.length).toBeGreaterThan(5);
  }, 60_000);
});
