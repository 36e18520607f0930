import { eq } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { runs, webhookDeliveries, type Batch } from "@/db/schema";
import { loadBatchView } from "@/lib/api/views";
import { newId } from "@/lib/ids";

/**
 * Writes the settled batch's webhook to the outbox, in the transaction that settled it: the
 * delivery cannot be lost between the decision and the send, and the worker retries it until 2xx.
 */
export async function enqueueBatchWebhook(
  tx: Transaction,
  batch: Batch,
  eventType: string,
): Promise<void> {
  if (!batch.callbackUrl) return;
  const [run] = await tx
    .select({ agentKeyId: runs.agentKeyId })
    .from(runs)
    .where(eq(runs.id, batch.runId));
  const view = await loadBatchView(tx, batch.id);
  const now = Date.now();
  const id = `msg_${newId()}`;
  await tx.insert(webhookDeliveries).values({
    id,
    agentKeyId: run!.agentKeyId,
    batchId: batch.id,
    url: batch.callbackUrl,
    eventType,
    payload: JSON.stringify({
      type: eventType,
      timestamp: new Date(now).toISOString(),
      data: view,
    }),
    status: "pending",
    nextAttemptAt: now,
    createdAt: now,
  });
}
