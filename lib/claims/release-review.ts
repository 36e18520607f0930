import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { reviewClaims } from "@/db/schema";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import {
  assembleBatchViews,
  readBatchViewRows,
  type BatchView,
} from "@/lib/read-models/batch-run-views";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime } from "@/lib/ids";
import { stillReviewing } from "./still-reviewing";

/**
 * Ends the caller's review claim. Idempotent: with no claim of theirs (never claimed, already
 * released, expired) it answers the batch as it is. Another reviewer's live claim is theirs to end:
 * 409 `already_claimed` naming the holder. Reads, then one write batch (db/write-batch.ts) that
 * deletes the claim as read: a claim renewed or released meanwhile aborts it, and the next
 * attempt answers from the claim as it is then.
 */
export async function releaseReview(actor: Actor, batchId: string): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  return untilWritten(async () => {
    const db = getDb();
    const { batch } = await findBatchForReviewer(db, reviewer, batchId);
    const [rows, mine] = await Promise.all([
      readBatchViewRows(db, [batch.id]),
      // The caller's claim, ended or not: an ended one is deleted too, without news.
      db
        .select({ expiresAt: reviewClaims.expiresAt })
        .from(reviewClaims)
        .where(and(eq(reviewClaims.batchId, batch.id), eq(reviewClaims.userId, reviewer.id))),
    ]);
    const now = Date.now();
    const row = rows.batchRows[0]!;
    const released = mine[0];
    if (!released) {
      if (row.claimUserId !== null && row.claimExpiresAt !== null && row.claimantName !== null) {
        throw new ConflictError(
          "already_claimed",
          `${row.claimantName} is reviewing this card until ${isoTime(row.claimExpiresAt)}; only they can release it.`,
          assembleBatchViews(rows, [batch.id])[0]!,
          {
            holder: { id: row.claimUserId, name: row.claimantName },
            expiresAt: isoTime(row.claimExpiresAt),
          },
        );
      }
      return assembleBatchViews(rows, [batch.id])[0]!;
    }
    if (row.claimUserId === reviewer.id)
      rows.batchRows[0] = { ...row, claimUserId: null, claimExpiresAt: null, claimantName: null };
    const view = assembleBatchViews(rows, [batch.id])[0]!;
    await commit([
      stillReviewing(batch, reviewer, null),
      statement(
        "delete from review_claims where batch_id = ? and user_id = ? and expires_at = ?",
        batch.id,
        reviewer.id,
        released.expiresAt,
      ),
      changedRow(),
      // Only a claim others could still see is news; an expired one vanished from views already.
      ...(released.expiresAt > now
        ? [
            eventRows({
              type: "review.released",
              runId: batch.runId,
              batchId: batch.id,
              queueId: batch.queueId,
              actor: actorRef(reviewer),
              data: { batch: view },
              at: now,
            }),
          ]
        : []),
    ]);
    return view;
  });
}
