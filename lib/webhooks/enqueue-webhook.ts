import { webhookDeliveries, type Batch } from "@/db/schema";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { newId } from "@/lib/ids";
import { insertRows, type Statement } from "@/db/write-batch";

/**
 * The settled batch's webhook, as an outbox row written in the batch that settles it: the
 * delivery cannot be lost between the decision and the send, and the worker retries it until 2xx.
 */
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
