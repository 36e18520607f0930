import { metrics } from "@/lib/metrics/metrics";
import { and, asc, eq, lte, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { getDb } from "@/db/client";
import { changedRow, StateMoved, updateRow, writeBatch } from "@/db/write-batch";
import { agentKeys, batches, webhookDeliveries, type WebhookDelivery } from "@/db/schema";
import { openSecret, SECRET_PLACES } from "@/lib/auth/sealed-secrets";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { resolveCallbackTarget, type CheckedTarget, type Lookup } from "./callback-target";
import { postWebhook } from "./post-webhook";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// The outbox worker: sends owed webhooks, signed with Standard Webhooks headers, and retries with
// exponential backoff until the receiver answers 2xx. State lives in the outbox rows, so a restart
// resumes where it stopped; receivers deduplicate on `webhook-id` (delivery is at least once).
//
// Every send checks its target again (lib/webhooks/callback-target.ts) and connects to the
// address it checked. A delivery that can never succeed is failed at once instead of retried for
// ever, with a `webhook.failed` event on the run (its timeline and streams show it): a target the
// check refuses (a forbidden address, credentials in the URL, an allow-list that no longer lets
// it through), or a receiver that answers 410 Gone. Anything else — refused connections, time
// outs, DNS failures, 5xx, and 4xx that a receiver's fix can change (401, 404 …) — is retried.

const IN_FLIGHT_MS = 30_000; // a claimed send that never reports back is retried after this
const SEND_TIMEOUT_MS = 10_000;

export function retryDelayMs(attempts: number): number {
  const base = setting("WEBHOOK_RETRY_BASE_MS");
  return Math.min(base * 2 ** Math.max(0, attempts - 1), 3600_000);
}

/** Sends at once, per process, and per receiver (origin); more due deliveries wait for a later poll. */
const MAX_IN_FLIGHT = 64;
const MAX_IN_FLIGHT_PER_RECEIVER = 4;
const inFlight = new Map<string, number>(); // receiver origin → sends in flight
let inFlightTotal = 0;

/** A LIKE pattern for the URLs of a receiver (a backslash escapes LIKE's own wildcards). */
const likePrefix = (origin: string) => `${origin.replace(/[\\%_]/g, "\\$&")}/%`;

function receiverOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/**
 * Starts sending the deliveries that are due (as many as there is room for) and returns how many
 * it started, without waiting for them. Each receiver gets a few sends at a time, so receivers
 * that hang (each send up to SEND_TIMEOUT_MS) or answer slowly hold only their own deliveries,
 * never those to other receivers (`npm run chaos` measures it).
 */
export async function deliverDueWebhooks(
  now = Date.now(),
  options: { lookup?: Lookup } = {},
): Promise<number> {
  if (inFlightTotal >= MAX_IN_FLIGHT) return 0;
  // Receivers already at their limit are left out here, so a backlog owed to one of them cannot
  // fill the page and starve the others.
  const full = [...inFlight].filter(([, n]) => n >= MAX_IN_FLIGHT_PER_RECEIVER);
  const due = await getDb()
    .select()
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, "pending"),
        lte(webhookDeliveries.nextAttemptAt, now),
        ...full.map(
          ([receiver]) =>
            sql`${webhookDeliveries.url} not like ${likePrefix(receiver)} escape '\\'`,
        ),
      ),
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(MAX_IN_FLIGHT);
  let started = 0;
  for (const delivery of due) {
    const receiver = receiverOf(delivery.url);
    const busy = inFlight.get(receiver) ?? 0;
    if (busy >= MAX_IN_FLIGHT_PER_RECEIVER) continue; // its turn comes at a later poll
    if (inFlightTotal >= MAX_IN_FLIGHT) break;
    inFlight.set(receiver, busy + 1);
    inFlightTotal++;
    started++;
    attempt(delivery, now, options.lookup)
      // the row stays pending: a failed bookkeeping write is retried after IN_FLIGHT_MS
      .catch((error) =>
        log().error(
          { err: error, deliveryId: delivery.id },
          "A webhook delivery failed; will retry",
        ),
      )
      .finally(() => {
        inFlightTotal--;
        const left = (inFlight.get(receiver) ?? 1) - 1;
        if (left === 0) inFlight.delete(receiver);
        else inFlight.set(receiver, left);
      });
  }
  return started;
}

/** Answers that say the receiver will never take this delivery: retrying cannot help. */
const GONE_STATUSES = new Set([410]);

async function attempt(delivery: WebhookDelivery, now: number, lookup?: Lookup): Promise<void> {
  // Claim the send (compare-and-swap on the due time) so two processes never send it at once.
  const [claimed] = await writeBatch([
    updateRow(
      webhookDeliveries,
      { attempts: delivery.attempts + 1, nextAttemptAt: now + IN_FLIGHT_MS },
      "id = ? and status = 'pending' and next_attempt_at = ?",
      delivery.id,
      delivery.nextAttemptAt,
    ),
  ]);
  if (claimed!.rowsAffected === 0) return;
  const attempts = delivery.attempts + 1;

  let statusCode: number | null = null;
  let error: string | null = null;
  let permanent = false;
  const target = await resolveCallbackTarget(delivery.url, { lookup });
  if (!target.ok) {
    error = target.reason;
    permanent = target.permanent;
  } else {
    try {
      statusCode = (await send(delivery, target)).status;
      if (statusCode < 200 || statusCode > 299) {
        error = `HTTP ${statusCode}${statusCode >= 300 && statusCode < 400 ? " (redirects are not followed)" : ""}`;
        permanent = GONE_STATUSES.has(statusCode);
      }
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
  }

  // The contract retries until a 2xx, however long the receiver is down (at most hourly).
  const delivered = error === null;
  const failed = !delivered && permanent;
  metrics().webhookAttempts.inc({ result: delivered ? "delivered" : failed ? "failed" : "retry" });
  const record = updateRow(
    webhookDeliveries,
    {
      status: delivered ? "delivered" : failed ? "failed" : "pending",
      lastStatusCode: statusCode,
      lastError: error,
      deliveredAt: delivered ? Date.now() : null,
      nextAttemptAt: delivered || failed ? now : Date.now() + retryDelayMs(attempts),
    },
    "id = ? and status = 'pending'",
    delivery.id,
  );
  if (!failed) {
    await writeBatch([record]);
    return;
  }
  const [batch] = await getDb()
    .select({ runId: batches.runId, queueId: batches.queueId })
    .from(batches)
    .where(eq(batches.id, delivery.batchId));
  try {
    await commit([
      record,
      changedRow(), // another process recorded this send first: its event stands
      eventRows({
        type: "webhook.failed",
        runId: batch!.runId,
        batchId: delivery.batchId,
        queueId: batch!.queueId,
        actor: SYSTEM_ACTOR,
        data: {
          deliveryId: delivery.id,
          eventType: delivery.eventType,
          url: shownUrl(delivery.url),
          attempts,
          statusCode,
          error,
        },
      }),
    ]);
  } catch (cause) {
    if (!(cause instanceof StateMoved)) throw cause;
  }
}

/** The URL without its query: a receiver may put a token there, and reviewers see this event. */
function shownUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return url.slice(0, 200);
  }
}

async function send(delivery: WebhookDelivery, target: CheckedTarget) {
  const [key] = await getDb()
    .select({ secret: agentKeys.webhookSecret })
    .from(agentKeys)
    .where(eq(agentKeys.id, delivery.agentKeyId));
  const secret = openSecret(key!.secret, SECRET_PLACES.webhookSecret(delivery.agentKeyId));
  const sentAt = new Date();
  const signature = new Webhook(secret).sign(delivery.id, sentAt, delivery.payload);
  const headers = {
    "content-type": "application/json",
    "user-agent": "Countersign-Webhooks/1",
    "webhook-id": delivery.id,
    "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
    "webhook-signature": signature,
  };
  return postWebhook(target, headers, delivery.payload, SEND_TIMEOUT_MS);
}
