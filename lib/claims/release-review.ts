import { and, eq } from "drizzle-orm";
import { reviewClaims } from "@/db/schema";
import { statement } from "@/db/write-batch";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";
import { changeReviewerMark } from "./reviewer-mark";

/**
 * Ends the caller's review claim. Idempotent: with no claim of theirs (never claimed, already
 * released, expired) it answers the batch as it is. Another reviewer's live claim is theirs to end:
 * 409 `already_claimed` naming the holder. Reads, then one write batch (reviewer-mark.ts) that
 * deletes the claim as read: a claim renewed or released meanwhile aborts it, and the next
 * attempt answers from the claim as it is then.
 */
export async function releaseReview(actor: Actor, batchId: string): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  return changeReviewerMark(reviewer, batchId, {
    // The caller's claim, ended or not: an ended one is deleted too, without news.
    read: (db, { batch }) =>
      db
        .select({ expiresAt: reviewClaims.expiresAt })
        .from(reviewClaims)
        .where(and(eq(reviewClaims.batchId, batch.id), eq(reviewClaims.userId, reviewer.id))),
    change: ({ target: { batch }, row, extra: [released], now, current }) => {
      if (!released) {
        if (row.claimUserId !== null && row.claimExpiresAt !== null && row.claimantName !== null) {
          throw new ConflictError(
            "already_claimed",
            `${row.claimantName} is reviewing this card until ${isoTime(row.claimExpiresAt)}; only they can release it.`,
            current(),
            {
              holder: { id: row.claimUserId, name: row.claimantName },
              expiresAt: isoTime(row.claimExpiresAt),
            },
          );
        }
        return null;
      }
      return {
        row:
          row.claimUserId === reviewer.id
            ? { ...row, claimUserId: null, claimExpiresAt: null, claimantName: null }
            : row,
        write: statement(
          "delete from review_claims where batch_id = ? and user_id = ? and expires_at = ?",
          batch.id,
          reviewer.id,
          released.expiresAt,
        ),
        whilePending: false,
        // Only a claim others could still see is news; an expired one vanished from views already.
        event: released.expiresAt > now ? { type: "review.released" } : null,
      };
    },
  });
}
