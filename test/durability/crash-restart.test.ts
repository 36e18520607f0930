import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches } from "@/db/schema";
import { freshDatabase } from "../support/database";
import {
  makeAgentKey,
  makeQueue,
  makeReviewer,
  type TestAgent,
  type TestReviewer,
} from "../support/factories";
import { loggedEvents, pauseNewRun } from "../support/flows";
import { apiClient, refundBatch } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { openSse, type SseClient } from "../support/sse";

// lib/README.md, invariant 1: the database is the only source of truth, so a server killed with SIGKILL
// loses nothing it acknowledged, and whatever starts next on the same file carries on: decisions,
// stream replay, and deadlines that passed while nothing ran. The servers here run one after another.

let databaseUrl: string;
let server: TestServer | undefined;
let queue: { id: string; name: string };
let dana: TestReviewer;
let lee: TestReviewer;
let agent: TestAgent;
const opened: SseClient[] = [];

beforeAll(async () => {
  databaseUrl = await freshDatabase("crash");
  queue = await makeQueue();
  dana = await makeReviewer({ name: "Dana", queues: [{ name: queue.name }] });
  lee = await makeReviewer({ name: "Lee", queues: [{ name: queue.name }] });
  agent = await makeAgentKey({ queues: [queue.name] });
});
afterAll(async () => {
  opened.forEach((client) => client.close());
  await server?.stop();
});

const start = async () => (server = await startServer({ databaseUrl }));
const idsOf = (client: SseClient) =>
  client.messages.filter((m) => m.id !== null).map((m) => Number(m.id));

describe("a server killed with SIGKILL", () => {
  it("loses no acknowledged decision, and a stream that reconnects to its successor gets every event it missed", async () => {
    const first = await start();
    const asAgent = apiClient(first.baseUrl, agent.key);
    const paused: any[] = [];
    for (let i = 0; i < 30; i++) paused.push((await pauseNewRun(asAgent)).batch);

    const watcher = await openSse(`${first.baseUrl}/api/v1/stream`, { token: dana.token });
    opened.push(watcher);
    await waitUntil(() => watcher.raw().startsWith("retry:"), { what: "the stream to open" });

    // 30 decisions by two reviewers, all in flight at once; the kill follows the last 200 at once.
    const reviewers = [dana, lee].map((r) => ({
      reviewer: r,
      client: apiClient(first.baseUrl, r.token),
    }));
    const decide = async (batch: any, i: number) => {
      const { reviewer, client } = reviewers[i % 2]!;
      const outcome = i % 3 === 0 ? "reject" : "approve";
      const response = await client.post(`/calls/${batch.calls[0].id}/decision`, {
        outcome,
        expectedRevision: 1,
      });
      return {
        batchId: batch.id as string,
        reviewerId: reviewer.id,
        outcome,
        status: response.status,
      };
    };
    const early = await Promise.all(paused.slice(0, 5).map((b, i) => decide(b, i)));
    await watcher.waitFor((m) => m.event === "batch.decided" && m.data.batchId === paused[4].id);
    const late = await Promise.all(paused.slice(5).map((b, i) => decide(b, i + 5)));
    await first.kill();

    const acknowledged = [...early, ...late];
    expect(acknowledged.map((a) => a.status)).toEqual(acknowledged.map(() => 200));
    const seenBeforeCrash = idsOf(watcher);
    expect(seenBeforeCrash.length).toBeGreaterThan(0);
    watcher.close();

    const second = await start();
    const asAgentNow = apiClient(second.baseUrl, agent.key);
    for (const { batchId, reviewerId, outcome } of acknowledged) {
      const { status, body } = await asAgentNow.get(`/batches/${batchId}`);
      expect(status).toBe(200);
      expect(body.status).toBe("decided");
      expect(body.outcome).toBe(outcome === "approve" ? "approved" : "rejected");
      expect(body.calls[0].decision).toMatchObject({
        outcome: outcome === "approve" ? "approved" : "rejected",
        source: "reviewer",
        by: { id: reviewerId },
      });
    }

    // More happens while the watcher is away, then it reconnects with the last id it saw.
    const { batch: whileAway } = await pauseNewRun(asAgentNow);
    const lastSeen = seenBeforeCrash.at(-1)!;
    const missed = (await loggedEvents(lastSeen, [queue.id])).map((e) => e.seq);
    expect(missed.length).toBeGreaterThanOrEqual(2);

    const resumed = await openSse(`${second.baseUrl}/api/v1/stream`, {
      token: dana.token,
      lastEventId: lastSeen,
    });
    opened.push(resumed);
    await resumed.waitFor((m) => m.id === String(missed.at(-1)));
    expect(idsOf(resumed)).toEqual(missed);
    expect(
      resumed.messages.some((m) => m.event === "batch.created" && m.data.batchId === whileAway.id),
    ).toBe(true);

    // …and then follows live events; across both connections it saw the log exactly once, in order.
    const { batch: afterwards } = await pauseNewRun(asAgentNow);
    await resumed.waitFor((m) => m.event === "batch.created" && m.data.batchId === afterwards.id);
    const everything = (await loggedEvents(seenBeforeCrash[0]! - 1, [queue.id])).map((e) => e.seq);
    expect([...seenBeforeCrash, ...idsOf(resumed)]).toEqual(everything);
    resumed.close();
  });

  it("ends its open streams when asked to stop (SIGTERM), so it exits promptly and the client resumes elsewhere", async () => {
    const running = server ?? (await start());
    const asAgent = apiClient(running.baseUrl, agent.key);
    await pauseNewRun(asAgent);
    const watcher = await openSse(`${running.baseUrl}/api/v1/stream`, {
      token: dana.token,
      lastEventId: 0,
    });
    opened.push(watcher);
    const seen = (await loggedEvents(0, [queue.id])).at(-1)!.seq;
    await watcher.waitFor((m) => m.id === String(seen));

    // Next.js waits for open requests before it exits; a stream never ends by itself. Without the
    // streams ending, only the 10 s grace (SHUTDOWN_GRACE_MS) would stop it; 6 s leaves room for
    // a loaded CI machine (3 s was once too tight there) and still tells the two apart.
    const stopped = await Promise.race([
      running.stop().then(() => true),
      sleep(6000).then(() => false),
    ]);
    if (!stopped) await running.kill();
    server = undefined;
    expect(stopped, "the server exited within 6 s of SIGTERM with a stream open").toBe(true);

    const next = await start();
    const { batch } = await pauseNewRun(apiClient(next.baseUrl, agent.key));
    const resumed = await openSse(`${next.baseUrl}/api/v1/stream`, {
      token: dana.token,
      lastEventId: seen,
    });
    opened.push(resumed);
    await resumed.waitFor((m) => m.event === "batch.created" && m.data.batchId === batch.id);
    expect(resumed.messages.map((m) => m.event)).toEqual(["run.created", "batch.created"]);
  });

  it("settles, as soon as a server starts, a deadline that passed while none was running", async () => {
    const running = server ?? (await start());
    const { batch } = await pauseNewRun(
      apiClient(running.baseUrl, agent.key),
      refundBatch({ timeoutSecs: 1 }),
    );
    await running.kill();
    server = undefined;

    // The server died before the deadline, so nothing settled the batch yet.
    const [row] = await getDb().select().from(batches).where(eq(batches.id, batch.id));
    expect(row!.status).toBe("pending");
    await sleep(Math.max(0, row!.expiresAt + 500 - Date.now()));

    const startedAt = Date.now();
    const next = await start();
    const asAgent = apiClient(next.baseUrl, agent.key);
    const settled = await waitUntil(
      async () => {
        const { body } = await asAgent.get(`/batches/${batch.id}`);
        return body.status === "pending" ? null : body;
      },
      // Start-up itself catches up on deadlines that passed (before the first request is served);
      // the periodic sweep alone would take a second more.
      { timeoutMs: 400, intervalMs: 20, what: "the overdue batch to be settled" },
    );
    expect(settled).toMatchObject({ status: "expired", outcome: "rejected" });
    expect(settled.calls[0].status).toBe("expired");
    expect(settled.calls[0].decision).toMatchObject({
      outcome: "rejected",
      source: "timeout",
      by: null,
    });
    expect(Date.parse(settled.decidedAt)).toBeGreaterThanOrEqual(startedAt);
    expect(Date.parse(settled.decidedAt) - startedAt).toBeLessThan(10_000);

    const run = await asAgent.get(`/runs/${batch.runId}`);
    expect(run.body.status).toBe("ready");
  });
});
