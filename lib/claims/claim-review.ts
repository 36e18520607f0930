import { eq, lte, or, sql } from "drizzle-orm";
import { z } from "zod";
import { reviewClaims } from "@/db/schema";
import { findBatchForReviewer } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { isoTime } from "@/lib/ids";
import { liveClaimOf } from "./claim-guard";

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
 * The write itself is the condition: the upsert only replaces a claim that is the caller's or has
 * expired, so of any number of reviewers claiming at once exactly one gets the row.
 */
export async function claimReview(
  actor: Actor,
  batchId: string,
  body: unknown,
): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(ClaimReviewInput, body ?? {});
  return transact(async (tx) => {
    const { batch } = await findBatchForReviewer(tx, reviewer, batchId);
    const now = Date.now();
    if (batch.status !== "pending" || batch.expiresAt <= now) {
      throw new ConflictError(
        "not_pending",
        `This batch is ${batch.status === "pending" ? "past its deadline" : batch.status}; there is nothing left to review.`,
        await loadBatchView(tx, batch.id),
      );
    }
    const expiresAt = now + input.minutes * 60_000;
    const [claimed] = await tx
      .insert(reviewClaims)
      .values({ batchId: batch.id, userId: reviewer.id, claimedAt: now, expiresAt })
      .onConflictDoUpdate({
        target: reviewClaims.batchId,
        set: {
          userId: reviewer.id,
          // A renewal keeps when the review began; a takeover of an expired claim starts anew.
          claimedAt: sql`case when ${reviewClaims.userId} = ${reviewer.id} and ${reviewClaims.expiresAt} > ${now} then ${reviewClaims.claimedAt} else excluded.claimed_at end`,
          expiresAt,
        },
        setWhere: or(eq(reviewClaims.userId, reviewer.id), lte(reviewClaims.expiresAt, now)),
      })
      .returning({ claimedAt: reviewClaims.claimedAt });
    if (!claimed) {
      const holder = await liveClaimOf(tx, batch.id, now);
      throw new ConflictError(
        "already_claimed",
        holder
          ? `${holder.name} is reviewing this card until ${isoTime(holder.expiresAt)}.`
          : "Someone else is reviewing this card.",
        await loadBatchView(tx, batch.id),
        holder
          ? {
              holder: { id: holder.userId, name: holder.name },
              expiresAt: isoTime(holder.expiresAt),
            }
          : {},
      );
    }
    const view = (await loadBatchView(tx, batch.id))!;
    await appendEvent(tx, {
      type: "review.claimed",
      runId: batch.runId,
      batchId: batch.id,
      queueId: batch.queueId,
      actor: actorRef(reviewer),
      data: { batch: view, expiresAt: isoTime(expiresAt), renewed: claimed.claimedAt !== now },
      at: now,
    });
    return view;
  });
}
