import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCli } from "../support/admin-cli";
import { getDb } from "@/db/client";
import { events } from "@/db/schema";
import { freshDatabase } from "../support/database";
import {
  makeAgentKey,
  makeQueue,
  makeReviewer,
  type TestAgent,
  type TestReviewer,
} from "../support/factories";
import { decideOverApi, loggedEvents, pauseNewRun } from "../support/flows";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { openSse, type SseClient } from "../support/sse";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

// Two app processes over one database file, with nothing between them but the file
// (lib/README.md, invariant 3): each tails the event log by polling `seq`, and every write is a compare-and-swap.

let one: TestServer;
let two: TestServer;
let queue: { id: string; name: string };
let dana: TestReviewer;
let lee: TestReviewer;
let agent: TestAgent;
let hooks: WebhookReceiver | undefined;
const opened: SseClient[] = [];

beforeAll(async () => {
  const databaseUrl = await freshDatabase("two-processes");
  queue = await makeQueue();
  dana = await makeReviewer({ name: "Dana", queues: [{ name: queue.name }] });
  lee = await makeReviewer({ name: "Lee", queues: [{ name: queue.name }] });
  agent = await makeAgentKey({ queues: [queue.name] });
  // Sweeps and deliveries often; the lease's holder runs them (lib/cluster), and each server sweeps
  // once at start.
  const env = { SWEEP_INTERVAL_MS: "50", WEBHOOK_POLL_MS: "20" };
  [one, two] = await Promise.all([
    startServer({ databaseUrl, env }),
    startServer({ databaseUrl, env }),
  ]);
});
afterAll(async () => {
  opened.forEach((client) => client.close());
  await Promise.all([one?.stop(), two?.stop(), hooks?.close()]);
});

const as = (server: TestServer, token: string): ApiClient => apiClient(server.baseUrl, token);

describe("two servers over one database file", () => {
  it("streams on one server carry events written through the other", async () => {
    const watcher = await openSse(`${two.baseUrl}/api/v1/stream`, { token: dana.token });
    opened.push(watcher);
    await waitUntil(() => watcher.raw().startsWith("retry:"), { what: "the stream to open" });

    const { batch } = await pauseNewRun(as(one, agent.key));
    await watcher.waitFor((m) => m.event === "batch.created" && m.data.batchId === batch.id, 2000);
    await decideOverApi(as(one, lee.token), batch.calls[0]);
    await watcher.waitFor((m) => m.event === "batch.decided" && m.data.batchId === batch.id, 2000);

    const ids = watcher.messages.map((m) => Number(m.id));
    const logged = (await loggedEvents(ids[0]! - 1, [queue.id])).map((e) => e.seq);
    expect(ids).toEqual(logged);
    expect(watcher.messages.map((m) => m.event)).toEqual([
      "run.created",
      "batch.created",
      // with one approval required, the vote decides: no separate call.voted
      "call.decided",
      "batch.decided",
    ]);
  });

  it("answers a long-poll on one server promptly when the decision is made on the other", async () => {
    const { batch } = await pauseNewRun(as(one, agent.key));
    let answeredAt = 0;
    const poll = as(two, agent.key)
      .get(`/batches/${batch.id}?wait=10`)
      .then((response) => ((answeredAt = Date.now()), response));

    await sleep(400);
    expect(answeredAt).toBe(0); // still held: the batch is pending
    await decideOverApi(as(one, dana.token), batch.calls[0], "reject");
    const decidedAt = Date.now();

    const { status, body } = await poll;
    expect(status).toBe(200);
    expect(body).toMatchObject({ id: batch.id, status: "decided", outcome: "rejected" });
    expect(body.calls[0].decision).toMatchObject({ source: "reviewer", by: { id: dana.id } });
    expect(answeredAt - decidedAt).toBeLessThan(1000);
  });

  it("lets exactly one of two reviewers on different servers decide each call", async () => {
    const paused: any[] = [];
    for (let i = 0; i < 10; i++)
      paused.push((await pauseNewRun(as(i % 2 ? one : two, agent.key))).batch);

    const results = await Promise.all(
      paused.map(async (batch) => {
        const body = (outcome: string) => ({ outcome, expectedRevision: batch.calls[0].revision });
        const [approve, reject] = await Promise.all([
          as(one, dana.token).post(`/calls/${batch.calls[0].id}/decision`, body("approve")),
          as(two, lee.token).post(`/calls/${batch.calls[0].id}/decision`, body("reject")),
        ]);
        return { batch, approve, reject };
      }),
    );

    for (const { batch, approve, reject } of results) {
      const statuses = [approve.status, reject.status].sort();
      expect(statuses).toEqual([200, 409]);
      const loser = approve.status === 409 ? approve : reject;
      expect(loser.body.error.code).toBe("already_decided");
      const winner =
        approve.status === 200
          ? { by: dana.id, outcome: "approved" }
          : { by: lee.id, outcome: "rejected" };
      expect(loser.body.error.current.decision).toMatchObject({
        outcome: winner.outcome,
        by: { id: winner.by },
      });

      const { body: now } = await as(two, agent.key).get(`/batches/${batch.id}`);
      expect(now.calls[0].decision).toMatchObject({
        outcome: winner.outcome,
        by: { id: winner.by },
      });
      const decided = await getDb()
        .select()
        .from(events)
        .where(and(eq(events.callId, batch.calls[0].id), eq(events.type, "call.decided")));
      expect(decided).toHaveLength(1);
    }
  });

  it("expires an overdue batch and sends its webhook once, whichever server sweeps and delivers", async () => {
    hooks = await startWebhookReceiver();
    const { batch } = await pauseNewRun(
      as(one, agent.key),
      refundBatch({ timeoutSecs: 1, callbackUrl: hooks.url }),
    );
    await waitUntil(() => hooks!.received.length >= 1, { timeoutMs: 4000, what: "the webhook" });
    await sleep(300); // many more passes of both sweepers and both workers

    expect(hooks.received).toHaveLength(1);
    const settled = await getDb().select().from(events).where(eq(events.batchId, batch.id));
    expect(settled.filter((e) => e.type === "batch.expired")).toHaveLength(1);
    expect(settled.filter((e) => e.type === "call.decided")).toHaveLength(1);
  });

  it("writes one unbroken hash chain of the event log from both processes (no fork)", async () => {
    // everything above raced two writers over one file; racing pauses once more, on both
    await Promise.all(
      [one, two, one, two, one, two].map((server) =>
        pauseNewRun(as(server, agent.key), refundBatch()),
      ),
    );
    const verified = await runAdminCli(process.env.DATABASE_URL!, "audit", "verify");
    expect(verified.stderr).toMatch(/^Database: .* \(DATABASE_URL from the environment\)\n$/);
    expect(verified.code).toBe(0);
  });
});
