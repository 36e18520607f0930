import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { batches, calls } from "@/db/schema";
import { findBatchFor } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { enqueueBatchWebhook } from "@/lib/webhooks/enqueue-webhook";
import { releaseRunIfSettled } from "./settle-batch";

export const CancelBatchInput = z.object({ reason: z.string().max(4000).optional() });
export type CancelBatchInput = z.infer<typeof CancelBatchInput>;

/** The agent withdraws a pending batch; its open calls are cancelled and the run is back in its hands. */
export async function cancelBatch(
  actor: Actor,
  batchId: string,
  body: unknown,
): Promise<BatchView> {
  const agent = requireAgent(actor);
  const input = parseInput(CancelBatchInput, body ?? {});
  return transact(async (tx) => {
    const batch = await findBatchFor(tx, agent, batchId);
    const now = Date.now();
    const [cancelled] = await tx
      .update(batches)
      .set({ status: "cancelled", decidedAt: now, cancelReason: input.reason ?? null })
      .where(and(eq(batches.id, batch.id), eq(batches.status, "pending")))
      .returning();
    if (!cancelled) {
      throw new ConflictError(
        "not_pending",
        `This batch is already ${batch.status}.`,
        await loadBatchView(tx, batch.id, "agent"),
      );
    }
    await tx
      .update(calls)
      .set({ status: "cancelled" })
      .where(and(eq(calls.batchId, batch.id), eq(calls.status, "pending")));
    await releaseRunIfSettled(tx, batch.runId, "running", now);
    await appendEvent(tx, {
      type: "batch.cancelled",
      runId: batch.runId,
      batchId: batch.id,
      queueId: batch.queueId,
      actor: actorRef(agent),
      data: { reason: input.reason ?? null },
      at: now,
    });
    const view = (await loadBatchView(tx, batch.id, "agent"))!;
    await enqueueBatchWebhook(tx, cancelled, "batch.cancelled", view);
    return view;
  });
}
