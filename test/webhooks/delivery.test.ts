import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { webhookDeliveries } from "@/db/schema";
import { freshDatabase } from "../support/database";
import {
  makeAgentKey,
  makeQueue,
  makeReviewer,
  type TestAgent,
  type TestReviewer,
} from "../support/factories";
import { decideOverApi, pauseNewRun } from "../support/flows";
import { apiClient, refundBatch } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { freePort, startServer, type TestServer } from "../support/server";
import {
  startWebhookReceiver,
  type ReceivedRequest,
  type WebhookReceiver,
} from "../support/webhook-receiver";

// callbackUrl webhooks: signed with Standard Webhooks headers, sent once the batch is settled,
// retried with backoff until answered 2xx, and owed across a crash (the outbox row is written in
// the transaction that settles the batch). One server at a time; the last test replaces it.

let databaseUrl: string;
let server: TestServer | undefined;
let reviewer: TestReviewer;
let agent: TestAgent;
const receivers: WebhookReceiver[] = [];

// Quick retries (100 ms, 200 ms, 400 ms …) and a worker that looks for due deliveries every 50 ms.
const env = { WEBHOOK_RETRY_BASE_MS: "100", WEBHOOK_POLL_MS: "50", SWEEP_INTERVAL_MS: "200" };

beforeAll(async () => {
  databaseUrl = await freshDatabase("webhooks");
  const queue = await makeQueue();
  reviewer = await makeReviewer({ queues: [{ name: queue.name }] });
  agent = await makeAgentKey({ queues: [queue.name] });
  server = await startServer({ databaseUrl, env });
});
afterAll(async () => {
  await server?.stop();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(options: Parameters<typeof startWebhookReceiver>[0] = {}) {
  const started = await startWebhookReceiver(options);
  receivers.push(started);
  return started;
}

/** Verifies a received webhook's signature with the agent key's secret; returns its payload. */
function verified(request: ReceivedRequest): any {
  return new Webhook(agent.webhookSecret).verify(request.body, request.headers);
}

const deliveryOf = async (batchId: string) =>
  (await getDb().select().from(webhookDeliveries).where(eq(webhookDeliveries.batchId, batchId)))[0];

describe("batch webhooks", () => {
  it("POSTs a signed webhook to the callbackUrl once the batch is settled", async () => {
    const hooks = await receiver();
    const asAgent = apiClient(server!.baseUrl, agent.key);
    const { batch } = await pauseNewRun(
      asAgent,
      refundBatch({ callbackUrl: `${hooks.url}/hooks/countersign?run=1` }),
    );

    await sleep(300); // several worker passes: nothing is owed while the batch is pending
    expect(hooks.received).toHaveLength(0);

    await decideOverApi(apiClient(server!.baseUrl, reviewer.token), batch.calls[0]);
    await waitUntil(() => hooks.received.length >= 1, { what: "the webhook" });
    const [hook] = hooks.received;
    expect(hook!.method).toBe("POST");
    expect(hook!.path).toBe("/hooks/countersign?run=1");
    expect(hook!.headers["content-type"]).toMatch(/^application\/json/);
    expect(hook!.headers["webhook-id"]).toBeTruthy();

    const payload = verified(hook!);
    expect(payload).toMatchObject({
      type: "batch.decided",
      data: { id: batch.id, runId: batch.runId, status: "decided", outcome: "approved" },
    });
    expect(payload.data.calls[0].decision).toMatchObject({
      outcome: "approved",
      by: { id: reviewer.id },
    });

    // The signature really binds the body and the secret.
    expect(() =>
      new Webhook(`whsec_${Buffer.from("not the secret").toString("base64")}`).verify(
        hook!.body,
        hook!.headers,
      ),
    ).toThrow();
    expect(() =>
      verified({ ...hook!, body: hook!.body.replace('"approved"', '"rejected"') }),
    ).toThrow();

    await sleep(300);
    expect(hooks.received).toHaveLength(1); // answered 200: sent once
  });

  it("sends batch.expired and batch.cancelled when a batch times out or is withdrawn", async () => {
    const hooks = await receiver();
    const asAgent = apiClient(server!.baseUrl, agent.key);
    const { batch: timingOut } = await pauseNewRun(
      asAgent,
      refundBatch({ callbackUrl: hooks.url, timeoutSecs: 1 }),
    );
    const { batch: withdrawn } = await pauseNewRun(
      asAgent,
      refundBatch({ callbackUrl: hooks.url }),
    );
    expect(
      (await asAgent.post(`/batches/${withdrawn.id}/cancel`, { reason: "user left" })).status,
    ).toBe(200);

    await waitUntil(() => hooks.received.length >= 2, { timeoutMs: 4000, what: "two webhooks" });
    const payloads = hooks.received.map(verified);
    expect(payloads.find((p) => p.data.id === timingOut.id)).toMatchObject({
      type: "batch.expired",
      data: { status: "expired", outcome: "rejected" },
    });
    expect(payloads.find((p) => p.data.id === withdrawn.id)).toMatchObject({
      type: "batch.cancelled",
      data: { status: "cancelled" },
    });
  });

  it("retries a receiver that answers 500, with backoff, and delivers on the third attempt with the same webhook-id", async () => {
    const hooks = await receiver({ answer: (_request, index) => (index < 2 ? 500 : 204) });
    const { batch } = await pauseNewRun(
      apiClient(server!.baseUrl, agent.key),
      refundBatch({ callbackUrl: hooks.url }),
    );
    await decideOverApi(apiClient(server!.baseUrl, reviewer.token), batch.calls[0], "reject");

    await waitUntil(() => hooks.received.length >= 3, { what: "three attempts" });
    await sleep(400); // would show a fourth attempt if the 204 had not counted
    expect(hooks.received.map((r) => r.answeredWith)).toEqual([500, 500, 204]);

    const ids = new Set(hooks.received.map((r) => r.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    const payloads = hooks.received.map(verified); // every attempt is freshly and validly signed
    expect(payloads.every((p) => p.type === "batch.decided" && p.data.id === batch.id)).toBe(true);
    expect(payloads[2].data.outcome).toBe("rejected");

    // Backoff: 100 ms after the first failure, 200 ms after the second.
    const [first, second, third] = hooks.received.map((r) => r.at);
    expect(second! - first!).toBeGreaterThanOrEqual(100);
    expect(third! - second!).toBeGreaterThanOrEqual(200);

    const delivery = await deliveryOf(batch.id);
    expect(delivery).toMatchObject({
      id: [...ids][0],
      status: "delivered",
      attempts: 3,
      lastStatusCode: 204,
    });
  });

  it("still delivers after the server was killed while the receiver was down", async () => {
    const port = await freePort(); // nothing listens here yet: connection refused
    const asAgent = apiClient(server!.baseUrl, agent.key);
    const { batch } = await pauseNewRun(
      asAgent,
      refundBatch({ callbackUrl: `http://127.0.0.1:${port}/hook` }),
    );
    await decideOverApi(apiClient(server!.baseUrl, reviewer.token), batch.calls[0]);

    // Let it fail a few times, and kill the server between attempts (not in the middle of one),
    // at a point where the next attempt is still at least half a second away.
    const failing = await waitUntil(
      async () => {
        const row = await deliveryOf(batch.id);
        const wait = (row?.nextAttemptAt ?? 0) - Date.now();
        return row &&
          row.status === "pending" &&
          row.lastError &&
          row.attempts >= 2 &&
          wait > 500 &&
          wait < 10_000
          ? row
          : null;
      },
      { timeoutMs: 5000, intervalMs: 10, what: "failed attempts with the next one well ahead" },
    );
    await server!.kill();
    server = undefined;
    expect(failing.lastStatusCode).toBeNull(); // nobody answered: the connection was refused

    const hooks = await receiver({ port });
    server = await startServer({ databaseUrl, env });
    await waitUntil(() => hooks.received.length >= 1, {
      timeoutMs: 5000,
      what: "the webhook after the restart",
    });
    const payload = verified(hooks.received[0]!);
    expect(payload).toMatchObject({
      type: "batch.decided",
      data: { id: batch.id, status: "decided" },
    });
    expect(hooks.received[0]!.headers["webhook-id"]).toBe(failing.id);

    const delivered = await waitUntil(
      async () => {
        const row = await deliveryOf(batch.id);
        return row?.status === "delivered" ? row : null;
      },
      { what: "the delivery to be recorded" },
    );
    expect(delivered.attempts).toBe(failing.attempts + 1);
    await sleep(300);
    expect(hooks.received).toHaveLength(1);
  });
});
