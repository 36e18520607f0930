import { and, eq } from "drizzle-orm";
import { reviewClaims } from "@/db/schema";
import { findBatchForReviewer } from "@/lib/api/access";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { isoTime } from "@/lib/ids";
import { liveClaimOf } from "./claim-guard";

/**
 * Ends the caller's review claim. Idempotent: with no claim of theirs (never claimed, already
 * released, expired) it answers the batch as it is. Another reviewer's live claim is theirs to end:
 * 409 `already_claimed` naming the holder.
 */
export async function releaseReview(actor: Actor, batchId: string): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  return transact(async (tx) => {
    const { batch } = await findBatchForReviewer(tx, reviewer, batchId);
    const now = Date.now();
    const [released] = await tx
      .delete(reviewClaims)
      .where(and(eq(reviewClaims.batchId, batch.id), eq(reviewClaims.userId, reviewer.id)))
      .returning({ expiresAt: reviewClaims.expiresAt });
    if (!released) {
      const holder = await liveClaimOf(tx, batch.id, now);
      if (holder) {
        throw new ConflictError(
          "already_claimed",
          `${holder.name} is reviewing this card until ${isoTime(holder.expiresAt)}; only they can release it.`,
          await loadBatchView(tx, batch.id),
          {
            holder: { id: holder.userId, name: holder.name },
            expiresAt: isoTime(holder.expiresAt),
          },
        );
      }
    }
    const view = (await loadBatchView(tx, batch.id))!;
    // Only a claim others could still see is news; an expired one vanished from views already.
    if (released && released.expiresAt > now) {
      await appendEvent(tx, {
        type: "review.released",
        runId: batch.runId,
        batchId: batch.id,
        queueId: batch.queueId,
        actor: actorRef(reviewer),
        data: { batch: view },
        at: now,
      });
    }
    return view;
  });
}
