import { z } from "zod";
import { reviewClaims } from "@/db/schema";
import { insertRows, statement } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";
import { changeReviewerMark } from "./reviewer-mark";

export const ClaimReviewInput = z.object({
  minutes: z
    .int()
    .min(1)
    .max(15)
    .default(5)
    .describe("how long the claim lasts (default 5); claim again before it ends to renew"),
});
export type ClaimReviewInput = z.input<typeof ClaimReviewInput>;

/**
 * "I'm reviewing this": claims a pending batch for a few minutes, or renews the caller's own claim.
 * Reads the batch with its live claim, then one write batch (reviewer-mark.ts) whose claim write
 * carries the claim as read: a renewal only while the caller's claim lasts, a new claim only
 * while nobody holds a live one. Of any number of reviewers claiming at once exactly one gets
 * the row; the others' batches abort, and their next attempt answers 409 naming the holder.
 */
export async function claimReview(
  actor: Actor,
  batchId: string,
  body: unknown,
): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(ClaimReviewInput, body ?? {});
  return changeReviewerMark(reviewer, batchId, {
    read: async () => undefined,
    // `now` is taken after the read, whose live claim is one with expiresAt past the read's
    // clock: a claim it saw live and that ended since fails the renewal's condition below, and
    // the next attempt reads it as ended.
    change: ({ target: { batch }, row, now, current }) => {
      if (row.batch.status !== "pending" || row.batch.expiresAt <= now) {
        throw new ConflictError(
          "not_pending",
          `This batch is ${row.batch.status === "pending" ? "past its deadline" : row.batch.status}; there is nothing left to review.`,
          current(),
        );
      }
      const holder =
        row.claimUserId !== null && row.claimExpiresAt !== null
          ? { id: row.claimUserId, name: row.claimantName, expiresAt: row.claimExpiresAt }
          : null;
      if (holder && holder.id !== reviewer.id) {
        throw new ConflictError(
          "already_claimed",
          holder.name
            ? `${holder.name} is reviewing this card until ${isoTime(holder.expiresAt)}.`
            : "Someone else is reviewing this card.",
          current(),
          holder.name
            ? {
                holder: { id: holder.id, name: holder.name },
                expiresAt: isoTime(holder.expiresAt),
              }
            : {},
        );
      }
      const renewed = holder !== null;
      const expiresAt = now + input.minutes * 60_000;
      const write = renewed
        ? // A renewal keeps when the review began.
          statement(
            "update review_claims set expires_at = ? where batch_id = ? and user_id = ? and expires_at > ?",
            expiresAt,
            batch.id,
            reviewer.id,
            now,
          )
        : // A new claim, or a takeover of an ended one (anyone's), starts anew.
          insertRows(
            reviewClaims,
            [{ batchId: batch.id, userId: reviewer.id, claimedAt: now, expiresAt }],
            " on conflict (batch_id) do update set user_id = excluded.user_id, claimed_at = excluded.claimed_at, expires_at = excluded.expires_at where review_claims.expires_at <= ?",
          );
      if (!renewed) write.args.push(now);
      return {
        row: {
          ...row,
          claimUserId: reviewer.id,
          claimExpiresAt: expiresAt,
          claimantName: reviewer.name,
        },
        write,
        whilePending: true,
        event: { type: "review.claimed", data: { expiresAt: isoTime(expiresAt), renewed } },
      };
    },
  });
}
