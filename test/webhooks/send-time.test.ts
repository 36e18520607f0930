import { eq } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { webhookDeliveries } from "@/db/schema";
import type { AgentActor } from "@/lib/auth/actor";
import { cancelBatch } from "@/lib/batches/cancel-batch";
import { createRun } from "@/lib/runs/create-run";
import type { Lookup } from "@/lib/webhooks/callback-target";
import { deliverDueWebhooks } from "@/lib/webhooks/deliver-webhooks";
import { freshDatabase } from "../support/database";
import { makeTeam } from "../support/factories";
import { refundBatch } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

// The send-time check (issue 14, finding 2), in this process with a stand-in resolver: the name
// is resolved when the webhook is sent, every address is checked, and the connection goes to the
// address that was checked, never to what a second resolution might answer (DNS rebinding).

let agent: AgentActor;
let receiver: WebhookReceiver;
let answerWith = 200;

beforeAll(async () => {
  await freshDatabase("webhook-send-time");
  const team = await makeTeam();
  agent = {
    kind: "agent",
    id: team.agent.id,
    name: "Support bot",
    defaultQueueId: team.queue.id,
    queueIds: [team.queue.id],
    ownerUserId: null,
    mode: "ask",
  };
  receiver = await startWebhookReceiver({ answer: () => answerWith });
});
afterAll(() => receiver?.close());
afterEach(() => {
  delete process.env.CALLBACK_ALLOWED_HOSTS;
  answerWith = 200;
  receiver.received.length = 0;
});

const resolvesTo =
  (address: string): Lookup =>
  async () => [{ address, family: 4 }];

/** A cancelled batch whose webhook to `callbackUrl` is owed; returns its delivery's id. */
async function owedWebhook(callbackUrl: string): Promise<string> {
  const { run } = await createRun(agent, { batch: refundBatch({ callbackUrl }) });
  await cancelBatch(agent, run.batches![0]!.id, {});
  const [row] = await getDb()
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.batchId, run.batches![0]!.id));
  return row!.id;
}

const deliveryById = async (id: string) =>
  (await getDb().select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)))[0]!;

async function settled(id: string) {
  return waitUntil(
    async () => {
      const row = await deliveryById(id);
      return row.status !== "pending" || row.lastError ? row : null;
    },
    { what: "the send to be recorded" },
  );
}

describe("webhook sends", () => {
  it("refuses, for good, a name that resolves to loopback when it is sent", async () => {
    // At creation the name does not resolve here (accepted: the send checks again) …
    const id = await owedWebhook(`http://rebinding.test:${receiver.port}/hook`);
    // … and at send time it answers 127.0.0.1.
    await deliverDueWebhooks(Date.now(), { lookup: resolvesTo("127.0.0.1") });
    const row = await settled(id);
    expect(row).toMatchObject({ status: "failed", attempts: 1, lastStatusCode: null });
    expect(row.lastError).toMatch(/rebinding\.test resolves to 127\.0\.0\.1, a loopback address/);

    // Never picked up again, whatever the clock says.
    expect(await deliverDueWebhooks(Date.now() + 86_400_000)).toBe(0);
    expect(receiver.received).toHaveLength(0);
  });

  it("connects to the address it checked, with the name in the Host header", async () => {
    process.env.CALLBACK_ALLOWED_HOSTS = "127.0.0.1";
    const id = await owedWebhook(`http://hooks.rebinding.test:${receiver.port}/hook?x=1`);
    // The system resolver knows no such name: only the checked address can have been used.
    await deliverDueWebhooks(Date.now(), { lookup: resolvesTo("127.0.0.1") });
    const row = await settled(id);
    expect(row).toMatchObject({ status: "delivered", lastStatusCode: 200 });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.headers.host).toBe(`hooks.rebinding.test:${receiver.port}`);
    expect(receiver.received[0]!.path).toBe("/hook?x=1");
  });

  it("tries the other checked addresses of a name when the first does not answer", async () => {
    process.env.CALLBACK_ALLOWED_HOSTS = "127.0.0.0/8";
    const id = await owedWebhook(`http://two.rebinding.test:${receiver.port}/hook`);
    const lookup: Lookup = async () => [
      { address: "127.0.0.2", family: 4 }, // nothing listens there
      { address: "127.0.0.1", family: 4 },
    ];
    await deliverDueWebhooks(Date.now(), { lookup });
    expect(await settled(id)).toMatchObject({ status: "delivered", lastStatusCode: 200 });
  });

  it("stops at 410 Gone, and keeps retrying a 404", async () => {
    process.env.CALLBACK_ALLOWED_HOSTS = "127.0.0.1";
    answerWith = 410;
    const gone = await owedWebhook(`http://127.0.0.1:${receiver.port}/gone`);
    await deliverDueWebhooks();
    expect(await settled(gone)).toMatchObject({
      status: "failed",
      lastStatusCode: 410,
      lastError: "HTTP 410",
    });

    answerWith = 404;
    const missing = await owedWebhook(`http://127.0.0.1:${receiver.port}/missing`);
    await deliverDueWebhooks();
    expect(await settled(missing)).toMatchObject({ status: "pending", lastStatusCode: 404 });
    await sleep(10);
    expect(await deliverDueWebhooks(Date.now() + 3600_000)).toBe(1); // only the 404 is owed
  });
});
