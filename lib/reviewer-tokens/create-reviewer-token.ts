import { z } from "zod";
import { getDb } from "@/db/client";
import { eq } from "drizzle-orm";
import { reviewerTokens, users } from "@/db/schema";
import { guard, insertRows } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { REVIEWER_TOKEN_PREFIX } from "@/lib/auth/actor";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId, newSecret, sha256Hex } from "@/lib/ids";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { reviewerTokenPrefix, tokenViews, type ReviewerTokenView } from "./reviewer-tokens";

export const CreateReviewerTokenInput = z.strictObject({});

/**
 * A new personal token for the caller (the operator names whose: `npm run admin -- reviewer token
 * --email E`). Nobody mints a token for someone else in the app: a token acts as its owner. One
 * write batch: the token row and `reviewer_token.created` (no queue: reviewer streams never carry it).
 */
export async function createReviewerToken(
  caller: QueueCaller,
  body: unknown,
  operatorFor?: { id: string },
): Promise<{ token: string; reviewerToken: ReviewerTokenView }> {
  parseInput(CreateReviewerTokenInput, body ?? {});
  const db = getDb();
  const manager = await managerOf(db, caller);
  const userId = manager.reviewer?.id ?? operatorFor?.id;
  if (!userId) throw new Error("The operator must name whose token to create.");
  // Named in the event as well as by id: the audit log reads who it was without a join.
  const [owner] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  const id = newId();
  const token = newSecret(REVIEWER_TOKEN_PREFIX);
  const tokenPrefix = reviewerTokenPrefix(token, REVIEWER_TOKEN_PREFIX);
  const now = Date.now();
  await commit([
    // the owner may have been deleted since the request authenticated
    guard(`exists (select 1 from "user" where id = ?)`, userId),
    insertRows(reviewerTokens, [
      { id, userId, tokenHash: sha256Hex(token), tokenPrefix, createdAt: now },
    ]),
    eventRows({
      type: "reviewer_token.created",
      queueId: null,
      actor: manager.eventActor,
      at: now,
      data: { tokenId: id, userId, userEmail: owner?.email ?? null, tokenPrefix },
    }),
  ]);
  const [reviewerToken] = await tokenViews(db, { ...manager, isAdmin: true }, { id });
  return { token, reviewerToken: reviewerToken! };
}
