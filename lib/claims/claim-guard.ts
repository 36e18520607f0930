import { and, eq, sql } from "drizzle-orm";
import type { Executor, Transaction } from "@/db/client";
import { reviewClaims, users } from "@/db/schema";
import type { DecisionTarget } from "@/lib/api/access";
import { loadBatchView } from "@/lib/api/views";
import type { ReviewerActor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";

/** Who holds the live review claim on a batch, if anyone (an expired claim holds nothing). */
export async function liveClaimOf(
  db: Executor,
  batchId: string,
  now = Date.now(),
): Promise<{ userId: string; name: string; expiresAt: number } | null> {
  const [row] = await db
    .select({ userId: reviewClaims.userId, name: users.name, expiresAt: reviewClaims.expiresAt })
    .from(reviewClaims)
    .innerJoin(users, eq(users.id, reviewClaims.userId))
    .where(and(eq(reviewClaims.batchId, batchId), sql`${reviewClaims.expiresAt} > ${now}`));
  return row ?? null;
}

/**
 * Called before a reviewer's decision writes anything. In a `lock` queue only the claimant may
 * decide a claimed batch (everyone else gets 409 `claimed_by_other` with the batch and its claim);
 * a decision by the claimant ends the claim in the same transaction, so no card stays marked
 * "reviewing" after its reviewer moved on.
 */
export async function guardClaimedDecision(
  tx: Transaction,
  reviewer: ReviewerActor,
  target: DecisionTarget,
): Promise<void> {
  const { claimedBy, batch } = target;
  if (claimedBy === null) return;
  if (claimedBy === reviewer.id) {
    await tx
      .delete(reviewClaims)
      .where(and(eq(reviewClaims.batchId, batch.id), eq(reviewClaims.userId, reviewer.id)));
    return;
  }
  if (target.claimMode !== "lock") return;
  const holder = await liveClaimOf(tx, batch.id);
  if (!holder) return; // expired between the two reads of this transaction
  throw new ConflictError(
    "claimed_by_other",
    `${holder.name} is reviewing this card until ${isoTime(holder.expiresAt)}; this queue lets only them decide it meanwhile.`,
    await loadBatchView(tx, batch.id),
    { holder: { id: holder.userId, name: holder.name }, expiresAt: isoTime(holder.expiresAt) },
  );
}
