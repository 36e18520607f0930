import { and, asc, eq, lte } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { getDb, writeTransaction } from "@/db/client";
import { agentKeys, webhookDeliveries, type WebhookDelivery } from "@/db/schema";

// The outbox worker: sends owed webhooks, signed with Standard Webhooks headers, and retries with
// exponential backoff until the receiver answers 2xx. State lives in the outbox rows, so a restart
// resumes where it stopped; receivers deduplicate on `webhook-id` (delivery is at least once).

const IN_FLIGHT_MS = 30_000; // a claimed send that never reports back is retried after this
const SEND_TIMEOUT_MS = 10_000;

export function retryDelayMs(attempts: number): number {
  const base = Number(process.env.WEBHOOK_RETRY_BASE_MS) || 1000;
  return Math.min(base * 2 ** Math.max(0, attempts - 1), 3600_000);
}

/** Sends at once, per process; more due deliveries wait for the next poll. */
const MAX_IN_FLIGHT = 32;
let inFlight = 0;

/**
 * Starts sending the deliveries that are due (as many as there is room for) and returns how many
 * it started, without waiting for them: a receiver that hangs holds only its own send (up to
 * SEND_TIMEOUT_MS), never the deliveries to other receivers (`npm run chaos` measures it).
 */
export async function deliverDueWebhooks(now = Date.now()): Promise<number> {
  const room = MAX_IN_FLIGHT - inFlight;
  if (room <= 0) return 0;
  const due = await getDb()
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, now)))
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(room);
  for (const delivery of due) {
    inFlight++;
    attempt(delivery, now)
      // the row stays pending: a failed bookkeeping write is retried after IN_FLIGHT_MS
      .catch((error) => console.error(`Webhook delivery ${delivery.id} failed; will retry:`, error))
      .finally(() => inFlight--);
  }
  return due.length;
}

async function attempt(delivery: WebhookDelivery, now: number): Promise<void> {
  // Claim the send (compare-and-swap on the due time) so two processes never send it at once.
  const claimed = await writeTransaction((tx) =>
    tx
      .update(webhookDeliveries)
      .set({ attempts: delivery.attempts + 1, nextAttemptAt: now + IN_FLIGHT_MS })
      .where(
        and(
          eq(webhookDeliveries.id, delivery.id),
          eq(webhookDeliveries.status, "pending"),
          eq(webhookDeliveries.nextAttemptAt, delivery.nextAttemptAt),
        ),
      )
      .returning(),
  );
  if (claimed.length === 0) return;
  const attempts = delivery.attempts + 1;

  let statusCode: number | null = null;
  let error: string | null = null;
  try {
    const response = await send(delivery);
    statusCode = response.status;
    if (!response.ok) error = `HTTP ${response.status}`;
  } catch (cause) {
    error = cause instanceof Error ? cause.message : String(cause);
  }

  // The contract retries until a 2xx, however long the receiver is down (at most hourly).
  const delivered = error === null;
  await writeTransaction((tx) =>
    tx
      .update(webhookDeliveries)
      .set({
        status: delivered ? "delivered" : "pending",
        lastStatusCode: statusCode,
        lastError: error,
        deliveredAt: delivered ? Date.now() : null,
        nextAttemptAt: delivered ? now : Date.now() + retryDelayMs(attempts),
      })
      .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, "pending"))),
  );
}

async function send(delivery: WebhookDelivery): Promise<Response> {
  const [key] = await getDb()
    .select({ secret: agentKeys.webhookSecret })
    .from(agentKeys)
    .where(eq(agentKeys.id, delivery.agentKeyId));
  const sentAt = new Date();
  const signature = new Webhook(key!.secret).sign(delivery.id, sentAt, delivery.payload);
  return fetch(delivery.url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "user-agent": "Countersign-Webhooks/1",
      "webhook-id": delivery.id,
      "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
      "webhook-signature": signature,
    },
    body: delivery.payload,
    signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    redirect: "manual",
  });
}
