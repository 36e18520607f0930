import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { events, webhookDeliveries } from "@/db/schema";
import { writeSnapshot } from "../support/api-fixtures";
import { freshDatabase } from "../support/database";
import { makeTeam } from "../support/factories";
import { decideOverApi, pauseNewRun } from "../support/flows";
import { apiClient, refundBatch } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

// Issue 14, finding 2: an agent key could make the server POST to its own loopback, the private
// network or the cloud metadata endpoint through `callbackUrl`. With no allow-list, such targets
// are refused when the batch is created (400, nothing written) and again when the webhook is
// sent, after resolving the name; a refused target is failed at once, never retried.

let databaseUrl: string;
let server: TestServer | undefined;
let team: Awaited<ReturnType<typeof makeTeam>>;
let receiver: WebhookReceiver;

// No allow-list: what an operator gets from a plain `npm start`.
const strict = { CALLBACK_ALLOWED_HOSTS: "", WEBHOOK_RETRY_BASE_MS: "100", WEBHOOK_POLL_MS: "50" };

beforeAll(async () => {
  databaseUrl = await freshDatabase("ssrf");
  team = await makeTeam();
  receiver = await startWebhookReceiver();
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

const hostile = () => [
  `http://127.0.0.1:${receiver.port}/hook`,
  `http://localhost:${receiver.port}/hook`,
  `http://2130706433:${receiver.port}/hook`,
  `http://0x7f.1:${receiver.port}/hook`,
  `http://127.1:${receiver.port}/hook`,
  `http://017700000001:${receiver.port}/hook`,
  `http://[::1]:${receiver.port}/hook`,
  `http://[::ffff:127.0.0.1]:${receiver.port}/hook`,
  "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
  "http://10.0.0.1/hook",
  "http://192.168.0.1/hook",
  "http://100.64.0.1/hook",
  "http://[fd00::1]/hook",
  "http://0.0.0.0/hook",
  "https://user:secret@example.com/hook",
];

describe("callbackUrl at creation", () => {
  beforeAll(async () => {
    server = await startServer({ databaseUrl, env: strict });
  });
  afterAll(async () => {
    await server?.stop();
    server = undefined;
  });

  it("refuses every hostile target with 400 invalid_request on POST /runs, writing nothing", async () => {
    const agent = apiClient(server!.baseUrl, team.agent.key);
    const before = await writeSnapshot();
    for (const callbackUrl of hostile()) {
      const answer = await agent.post("/runs", { batch: refundBatch({ callbackUrl }) });
      expect(answer.status, callbackUrl).toBe(400);
      expect(answer.body.error.code).toBe("invalid_request");
      const issue = answer.body.error.issues.find(
        (i: { path: string }) => i.path === "batch.callbackUrl",
      );
      expect(issue?.message, callbackUrl).toMatch(/refused|credentials/);
    }
    expect(await writeSnapshot()).toEqual(before);
    expect(receiver.received).toHaveLength(0);
  });

  it("refuses them on POST /runs/{runId}/batches too", async () => {
    const agent = apiClient(server!.baseUrl, team.agent.key);
    const run = await agent.post("/runs", {});
    expect(run.status).toBe(201);
    const before = await writeSnapshot();
    for (const callbackUrl of hostile()) {
      const answer = await agent.post(`/runs/${run.body.id}/batches`, refundBatch({ callbackUrl }));
      expect(answer.status, callbackUrl).toBe(400);
      expect(answer.body.error.issues.map((i: { path: string }) => i.path)).toContain(
        "callbackUrl",
      );
    }
    expect(await writeSnapshot()).toEqual(before);
  });

  it("still accepts a public target", async () => {
    const agent = apiClient(server!.baseUrl, team.agent.key);
    const answer = await agent.post("/runs", {
      batch: refundBatch({ callbackUrl: "https://93.184.216.34/hooks/countersign" }),
    });
    expect(answer.status).toBe(201);
  });
});

describe("callbackUrl at send time", () => {
  it("refuses a name that resolves to loopback when the allow-list no longer lets it through, and never retries it", async () => {
    const callbackUrl = `http://localhost:${receiver.port}/hook`;
    // Created while the operator allowed it…
    server = await startServer({
      databaseUrl,
      env: { ...strict, CALLBACK_ALLOWED_HOSTS: `localhost:${receiver.port}` },
    });
    const { run, batch } = await pauseNewRun(
      apiClient(server.baseUrl, team.agent.key),
      refundBatch({ callbackUrl }),
    );
    await server.stop();
    // …and sent after the allow-list was emptied.
    server = await startServer({ databaseUrl, env: strict });
    await decideOverApi(apiClient(server.baseUrl, team.reviewer.token), batch.calls[0]);

    const deliveryOf = async () =>
      (
        await getDb()
          .select()
          .from(webhookDeliveries)
          .where(eq(webhookDeliveries.batchId, batch.id))
      )[0];
    const failed = await waitUntil(
      async () => {
        const row = await deliveryOf();
        return row?.status === "failed" ? row : null;
      },
      { what: "the delivery to be failed" },
    );
    expect(failed.lastError).toMatch(/localhost.*loopback/);
    expect(failed.attempts).toBe(1);

    await sleep(500); // ten worker passes at 50 ms, with retries due after 100 ms
    expect((await deliveryOf())!.attempts).toBe(1);
    expect(receiver.received).toHaveLength(0);

    // The run's timeline (and its stream) says so.
    const [event] = await getDb()
      .select()
      .from(events)
      .where(and(eq(events.runId, run.id), eq(events.type, "webhook.failed")));
    expect(event).toMatchObject({ batchId: batch.id, queueId: team.queue.id });
    expect(event!.data).toMatchObject({ deliveryId: failed.id, url: callbackUrl });
    expect(String((event!.data as { error: string }).error)).toMatch(/loopback/);
  });
});
