import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CountersignError, type RunEvent } from "@/lib/sdk/index";
import { freshDatabase } from "@/test/support/database";
import { sleep, waitUntil } from "@/test/support/polling";
import { startServer, type TestServer } from "@/test/support/server";
import { decide, pendingBatch, sdkTeam, type SdkTeam } from "./fixtures";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy";

// waitForDecision never misses a decision: not when its stream is cut mid-wait (it resumes with
// Last-Event-ID and gets the replay), not when streaming does not work at all (it long-polls),
// not when the server is killed and another one takes over the database.

let databaseUrl: string;
let server: TestServer;
let team: SdkTeam & { secondReviewer: () => Promise<import("@/test/support/http").ApiClient> };
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase("sdk-wait");
  server = await startServer({ databaseUrl });
  team = await sdkTeam(server.baseUrl, { requiredApprovals: 2 });
}, 60_000);
afterAll(async () => {
  await Promise.all(proxies.map((proxy) => proxy.close()));
  await server?.stop();
});

let orders = 0;
async function pausedRun(client = team.client) {
  const orderId = `W-${++orders}`;
  const run = await client.createRun({
    batch: {
      calls: [{ toolCallId: `call-${orderId}`, toolName: "refund_order", args: { orderId } }],
    },
  });
  return { run, batch: run.batches![0]! };
}

/** Both approvals of the queue's quorum of two. */
async function approveTwice(batchId: string) {
  const seen = await pendingBatch(team.reviewer, team.queue.id, (b) => b.id === batchId);
  await decide(team.reviewer, seen.calls[0], "approve");
  const lee = await team.secondReviewer();
  await decide(lee, seen.calls[0], "approve");
}

describe("waitForDecision", () => {
  it("resumes a cut stream with Last-Event-ID and gets the decision made while it was away", async () => {
    const proxy = await startTcpProxy(server.port);
    proxies.push(proxy);
    const client = team.clientWith({ baseUrl: proxy.baseUrl });
    const { batch } = await pausedRun();
    const events: RunEvent[] = [];
    const waiting = client.waitForDecision(batch.id, {
      mode: "stream",
      onEvent: (event) => events.push(event),
    });

    // A first vote (quorum 2: still pending) reaches the open stream and gives it an event id.
    await waitUntil(() => proxy.requests.some((r) => r.includes("/stream")), {
      what: "the stream to open",
    });
    const seen = await pendingBatch(team.reviewer, team.queue.id, (b) => b.id === batch.id);
    await decide(team.reviewer, seen.calls[0], "approve");
    await waitUntil(() => events.some((e) => e.type === "call.voted"), {
      what: "the vote on the stream",
    });
    const lastSeen = events.at(-1)!.seq;

    // Cut, and keep it down while the decisive vote is cast.
    proxy.refuse(true);
    proxy.cutAll();
    const lee = await team.secondReviewer();
    await decide(lee, seen.calls[0], "approve");
    await sleep(300);
    proxy.refuse(false);

    const settled = await waiting;
    expect(settled).toMatchObject({ id: batch.id, status: "decided", outcome: "approved" });
    const resumed = proxy.requests.filter(
      (r) => /last-event-id: (\d+)/i.exec(r)?.[1] === String(lastSeen),
    );
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    // The decision came as a replay on the resumed stream, not from a poll.
    expect(events.some((e) => e.type === "batch.decided" && e.batchId === batch.id)).toBe(true);
    expect(proxy.requests.some((r) => r.includes("wait="))).toBe(false);
  });

  it("falls back to long-polling when the stream keeps failing", async () => {
    const urls: string[] = [];
    const client = team.clientWith({
      fetch: (url, init) => {
        urls.push(url);
        return url.includes("/stream")
          ? Promise.reject(new TypeError("fetch failed"))
          : fetch(url, init);
      },
    });
    const { batch } = await pausedRun();
    const waiting = client.waitForDecision(batch.id);
    await waitUntil(() => urls.some((u) => u.includes("wait=")), {
      timeoutMs: 10_000,
      what: "a long-poll",
    });
    await approveTwice(batch.id);
    expect((await waiting).status).toBe("decided");
    expect(urls.filter((u) => u.includes("/stream")).length).toBeGreaterThanOrEqual(4);
  });

  it("long-polls at once where fetch gives no streaming body", async () => {
    const urls: string[] = [];
    const client = team.clientWith({
      fetch: async (url, init) => {
        urls.push(url);
        const response = await fetch(url, init);
        if (!url.includes("/stream")) return response;
        await response.body?.cancel();
        return new Response(null, { status: 200 });
      },
    });
    const { batch } = await pausedRun();
    const waiting = client.waitForDecision(batch.id);
    await waitUntil(() => urls.some((u) => u.includes("wait=")), { what: "a long-poll" });
    await approveTwice(batch.id);
    expect((await waiting).status).toBe("decided");
    expect(urls.filter((u) => u.includes("/stream"))).toHaveLength(1);
  });

  it("gives up after timeoutMs with wait_timeout, and stops at once on abort", async () => {
    const { batch } = await pausedRun();
    const timedOut = await team.client
      .waitForDecision(batch.id, { timeoutMs: 300 })
      .catch((e: unknown) => e);
    expect(CountersignError.is(timedOut, "wait_timeout")).toBe(true);
    expect((timedOut as CountersignError).current).toMatchObject({
      id: batch.id,
      status: "pending",
    });

    for (const mode of ["stream", "poll"] as const) {
      const controller = new AbortController();
      const waiting = team.client.waitForDecision(batch.id, { signal: controller.signal, mode });
      await sleep(200);
      controller.abort(new Error(`stopped ${mode}`));
      await expect(waiting).rejects.toThrow(`stopped ${mode}`);
    }
  });

  it("survives a server killed with SIGKILL: the next one on the same database answers", async () => {
    const { batch } = await pausedRun();
    const events: RunEvent[] = [];
    const waiting = team.client.waitForDecision(batch.id, { onEvent: (e) => events.push(e) });
    await sleep(300);
    await server.kill();
    server = await startServer({ databaseUrl, port: server.port });
    await approveTwice(batch.id);
    const settled = await waiting;
    expect(settled).toMatchObject({ id: batch.id, status: "decided", outcome: "approved" });
  });
});
