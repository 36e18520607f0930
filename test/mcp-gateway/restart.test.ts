import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { and, eq } from "drizzle-orm";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, request as httpRequest, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { calls, events, runs } from "@/db/schema";
import { makeQuickTeam, rowsOf, startApiServer } from "@/test/support/api-fixtures";
import { makeReviewer } from "@/test/support/factories";
import { apiClient, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";
import { filesystemRoot, throughGateway, type Connected } from "@/test/mcp-gateway/gateway-process";

// Issue 25, items 4 and "Bad input and faults": what was decided lives in Countersign, not in the
// gateway's memory. Real processes: the gateway's bin in front of server-filesystem, killed
// (SIGKILL) while a call waits, and a new gateway process (a new MCP session, the same agent key
// and gateway name) started after the decision. Also: a call waiting for a person holds up no
// later call of its session.

let server: TestServer;
const open: Connected[] = [];
const proxies: Server[] = [];

beforeAll(async () => {
  server = await startApiServer("mcp-gateway-restart");
}, 60_000);
afterAll(async () => {
  await Promise.all(open.map((connected) => connected.close().catch(() => {})));
  for (const proxy of proxies) {
    proxy.closeAllConnections();
    proxy.close();
  }
  await server?.stop();
});

async function team(countersignUrl?: string) {
  const t = await makeQuickTeam();
  const lead = await makeReviewer({ queues: [{ name: t.queue.name, role: "lead" }] });
  const root = filesystemRoot();
  const gateway = async (extra: string[] = []) => {
    const connected = await throughGateway({
      countersignUrl: countersignUrl ?? server.baseUrl,
      agentKey: t.agent.key,
      root,
      name: "filesystem",
      extra,
    });
    open.push(connected);
    return connected;
  };
  return {
    ...t,
    root,
    gateway,
    reviewerApi: apiClient(server.baseUrl, t.reviewer.token),
    leadApi: apiClient(server.baseUrl, lead.token),
  };
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === "text" ? part.text : "")).join("\n");

async function pendingCards(reviewer: ApiClient, queueId: string, count: number) {
  return waitUntil(
    async () => {
      const answer = await reviewer.get(`/queue?queue=${queueId}&status=pending`);
      const cards = answer.body.batches ?? [];
      return cards.length >= count ? cards : null;
    },
    { timeoutMs: 15_000, what: `${count} pending card(s)` },
  );
}

async function approve(
  reviewer: ApiClient,
  card: { id: string; calls: { id: string; revision: number }[] },
) {
  const [call] = card.calls;
  const decided = await reviewer.post(`/calls/${call!.id}/decision`, {
    outcome: "approve",
    expectedRevision: call!.revision,
  });
  expect(decided.status, JSON.stringify(decided.body)).toBe(200);
  await waitUntil(
    async () => (await reviewer.get(`/batches/${card.id}`)).body.status === "decided",
  );
}

function killed(connected: Connected): Promise<void> {
  const pid = connected.pid!;
  process.kill(pid, "SIGKILL");
  return waitUntil(
    () => {
      try {
        process.kill(pid, 0);
        return false;
      } catch {
        return true;
      }
    },
    { what: "the gateway process to be gone" },
  ).then(() => {});
}

describe("a gateway restarted while a call waits", () => {
  it("loses nothing decided: the identical call of the new process is answered from the decision, once; a changed argument or a replay is asked afresh", async () => {
    const { gateway, root, reviewerApi, queue } = await team();
    const path = join(root, "decided-while-down.txt");
    const args = { path, content: "approved while the gateway was down" };

    const first = await gateway();
    // A client that keeps waiting (a progress token): no answer deadline, the card just waits.
    const waiting = first.client.callTool({ name: "write_file", arguments: args }, undefined, {
      onprogress: () => {},
      timeout: 60_000,
      resetTimeoutOnProgress: true,
    });
    waiting.catch(() => {});
    const [card] = await pendingCards(reviewerApi, queue.id, 1);
    await killed(first);
    await expect(waiting).rejects.toThrow();
    // The gateway died without a word: the card is still waiting for its reviewer.
    expect((await reviewerApi.get(`/batches/${card.id}`)).body.status).toBe("pending");
    await approve(reviewerApi, card);
    expect(existsSync(path)).toBe(false);

    // A new process, a new MCP session, the same agent key and gateway name.
    const second = await gateway(["--answer-within", "1"]);
    const picked = (await second.client.callTool({
      name: "write_file",
      arguments: { content: args.content, path }, // the same arguments, keys in another order
    })) as CallToolResult;
    expect(picked.isError, textOf(picked)).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe(args.content);
    // No second card was made for it.
    const all = await reviewerApi.get(`/queue?queue=${queue.id}&status=all`);
    expect(all.body.batches).toHaveLength(1);

    // The approval was used: the same call again is a new card, and nothing runs meanwhile.
    rmSync(path);
    const replay = (await second.client.callTool({
      name: "write_file",
      arguments: args,
    })) as CallToolResult;
    expect(replay.isError).toBe(true);
    expect(textOf(replay)).toMatch(/awaiting approval/);
    // A changed argument is not the approved call either.
    const changed = (await second.client.callTool({
      name: "write_file",
      arguments: { path, content: "something else" },
    })) as CallToolResult;
    expect(textOf(changed)).toMatch(/awaiting approval/);
    expect(existsSync(path)).toBe(false);
    await pendingCards(reviewerApi, queue.id, 2);

    // The new session's run shows the decision it used (from the first session's run) and what ran.
    const used = await waitUntil(async () => {
      const rows = await getDb()
        .select()
        .from(events)
        .where(and(eq(events.callId, card.calls[0].id), eq(events.type, "tool.completed")));
      return rows[0] ?? null;
    });
    const usedBy = await getDb()
      .select()
      .from(events)
      .where(and(eq(events.runId, used.runId!), eq(events.type, "call.used")));
    expect(usedBy).toHaveLength(1);
    expect(usedBy[0]!.data).toMatchObject({ fromRunId: card.runId, outcome: "approved" });
  }, 90_000);

  it("keeps the cards its client gave up on past the session's end, for the next session to pick up", async () => {
    const { gateway, root, reviewerApi, queue } = await team();
    const path = join(root, "after-lunch.txt");
    const args = { path, content: "after lunch" };
    const first = await gateway(["--answer-within", "1"]);
    const gaveUp = (await first.client.callTool({
      name: "write_file",
      arguments: args,
    })) as CallToolResult;
    expect(textOf(gaveUp)).toMatch(/awaiting approval/);
    const [card] = await pendingCards(reviewerApi, queue.id, 1);
    await first.close();
    await waitUntil(async () => (await rowsOf(card.runId)).run?.status === "completed", {
      what: "the first session's run to be completed",
    });
    expect((await reviewerApi.get(`/batches/${card.id}`)).body.status).toBe("pending");

    // The next session asks the same before anyone decided: it waits on the same card.
    const second = await gateway(["--answer-within", "20"]);
    const decidedMeanwhile = second.client.callTool({ name: "write_file", arguments: args });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await approve(reviewerApi, card);
    const result = (await decidedMeanwhile) as CallToolResult;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe("after lunch");
    const all = await reviewerApi.get(`/queue?queue=${queue.id}&status=all`);
    expect(all.body.batches).toHaveLength(1);
  }, 90_000);
});

describe("calls of one session", () => {
  it("are not serialized: a call waiting for a person holds up no later allowed call", async () => {
    const { gateway, root, reviewerApi, leadApi, queue } = await team();
    const rule = await leadApi.post("/policy-rules", {
      queue: queue.name,
      name: "listing is fine",
      effect: "allow",
      toolPattern: "filesystem.list_*",
    });
    expect(rule.status).toBe(201);
    const session = await gateway();
    const path = join(root, "slow.txt");
    const waiting = session.client.callTool(
      { name: "write_file", arguments: { path, content: "when approved" } },
      undefined,
      { onprogress: () => {}, timeout: 60_000, resetTimeoutOnProgress: true },
    );
    waiting.catch(() => {});
    const [card] = await pendingCards(reviewerApi, queue.id, 1);

    // While it waits, allowed calls of the same session answer at once, several in parallel.
    const started = Date.now();
    const listed = (await Promise.all(
      [1, 2, 3].map(() =>
        session.client.callTool({ name: "list_allowed_directories", arguments: {} }),
      ),
    )) as CallToolResult[];
    expect(Date.now() - started).toBeLessThan(5_000);
    for (const result of listed) {
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(textOf(result)).toContain(root);
    }
    // …and a second call needing a person gets its own card, without waiting for the first.
    const secondPath = join(root, "second.txt");
    const second = session.client.callTool(
      { name: "write_file", arguments: { path: secondPath, content: "second" } },
      undefined,
      { onprogress: () => {}, timeout: 60_000, resetTimeoutOnProgress: true },
    );
    second.catch(() => {});
    const cards = await pendingCards(reviewerApi, queue.id, 2);
    const secondCard = cards.find((c: { id: string }) => c.id !== card.id);

    // Decided in the other order, each answers its own call.
    await approve(reviewerApi, secondCard);
    expect(((await second) as CallToolResult).isError).toBeFalsy();
    expect(readFileSync(secondPath, "utf8")).toBe("second");
    expect(existsSync(path)).toBe(false);
    await approve(reviewerApi, card);
    expect(((await waiting) as CallToolResult).isError).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe("when approved");
  }, 90_000);
});

/**
 * Countersign behind a proxy that answers outcome reports 503 while `blocked`: the gateway's
 * report stays queued (retried with backoff) for as long as the test wants.
 */
async function outcomeBlockingProxy() {
  const state = { blocked: true, refused: 0, url: "" };
  const target = new URL(server.baseUrl);
  const proxy = createServer((request, response) => {
    if (state.blocked && request.url?.endsWith("/gated-calls/outcomes")) {
      state.refused++;
      request.resume();
      response
        .writeHead(503, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: "unavailable", message: "held by the test" } }));
      return;
    }
    const forwarded = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forwarded.on("error", () => response.destroy());
    request.pipe(forwarded);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxies.push(proxy);
  state.url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  return state;
}

describe("outcome reports of a gateway killed before sending them", () => {
  it("are kept in its spool and sent by the next gateway of that name and key: the run gets its tool.completed exactly once", async () => {
    const proxy = await outcomeBlockingProxy();
    const { gateway, root, leadApi, queue, agent } = await team(proxy.url);
    const rule = await leadApi.post("/policy-rules", {
      queue: queue.name,
      name: "listing is fine",
      effect: "allow",
      toolPattern: "filesystem.list_*",
    });
    expect(rule.status).toBe(201);
    const spool = mkdtempSync(join(tmpdir(), "countersign-gateway-spool-"));

    const first = await gateway(["--spool", spool]);
    const listed = (await first.client.callTool({
      name: "list_allowed_directories",
      arguments: {},
    })) as CallToolResult;
    expect(listed.isError, textOf(listed)).toBeFalsy();
    expect(textOf(listed)).toContain(root);
    // The report went (after its linger) and was refused for now: it is queued, and spooled.
    await waitUntil(() => proxy.refused > 0, { what: "the outcome report to be tried" });
    await killed(first);

    const [call] = await getDb()
      .select({ id: calls.id, runId: calls.runId })
      .from(calls)
      .innerJoin(runs, eq(runs.id, calls.runId))
      .where(eq(runs.agentKeyId, agent.id));
    const completed = () =>
      getDb()
        .select()
        .from(events)
        .where(and(eq(events.callId, call!.id), eq(events.type, "tool.completed")));
    expect(await completed()).toHaveLength(0); // lost, without the spool

    // The next gateway (same name, key and Countersign) sends it at start, before any call.
    proxy.blocked = false;
    const second = await gateway(["--spool", spool]);
    const [event] = await waitUntil(
      async () => {
        const rows = await completed();
        return rows.length > 0 ? rows : null;
      },
      { timeoutMs: 15_000, what: "the spooled tool.completed" },
    );
    expect(event!.runId).toBe(call!.runId); // on the run the call belongs to
    expect(event!.data).toMatchObject({ result: { isError: false } });
    expect(JSON.stringify(event!.data)).toContain(root);

    // Sent again (a done mark lost with a second crash, a second gateway recovering): harmless.
    const agentApi = apiClient(server.baseUrl, agent.key);
    const again = await agentApi.post(`/runs/${call!.runId}/gated-calls/outcomes`, {
      outcomes: [{ callId: call!.id, type: "tool.completed", result: { text: "again" } }],
    });
    expect(again.status, JSON.stringify(again.body)).toBeLessThan(300);
    expect(again.body).toMatchObject({ recorded: [], alreadyReported: [call!.id] });
    await second.close();
    const third = await gateway(["--spool", spool]);
    await third.close();
    expect(await completed()).toHaveLength(1);
    // Nothing is left in the spool: the files of gateways that sent everything are removed.
    const folders = readdirSync(spool);
    const left = folders.flatMap((folder) =>
      readdirSync(join(spool, folder)).filter(
        (file) => statSync(join(spool, folder, file)).size > 0,
      ),
    );
    expect(left).toEqual([]);
  }, 90_000);
});
