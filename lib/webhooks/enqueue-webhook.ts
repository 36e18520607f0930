import type { Transaction } from "@/db/client";
import { webhookDeliveries, type Batch } from "@/db/schema";
import type { BatchView } from "@/lib/api/views";
import { newId } from "@/lib/ids";
import { insertRows, type Statement } from "@/db/write-batch";

/**
 * Writes the settled batch's webhook to the outbox, in the transaction that settled it: the
 * delivery cannot be lost between the decision and the send, and the worker retries it until 2xx.
 */
export async function enqueueBatchWebhook(
  tx: Transaction,
  batch: Batch,
  eventType: string,
  view: BatchView,
): Promise<void> {
  if (!batch.callbackUrl) return;
  await tx.insert(webhookDeliveries).values(webhookDelivery(batch, eventType, view, Date.now()));
}

/** The same outbox row as a statement of a write batch (db/write-batch.ts). */
export function webhookRow(
  batch: Batch,
  eventType: string,
  view: BatchView,
  now: number,
): Statement {
  return insertRows(webhookDeliveries, [webhookDelivery(batch, eventType, view, now)]);
}

function webhookDelivery(batch: Batch, eventType: string, view: BatchView, now: number) {
  return {
    id: `msg_${newId()}`,
    agentKeyId: view.agent.id,
    batchId: batch.id,
    url: batch.callbackUrl!,
    eventType,
    payload: JSON.stringify({
      type: eventType,
      timestamp: new Date(now).toISOString(),
      data: view,
    }),
    status: "pending" as const,
    nextAttemptAt: now,
    createdAt: now,
  };
}
