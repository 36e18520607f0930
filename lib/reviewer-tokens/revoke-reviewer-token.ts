import { getDb } from "@/db/client";
import { eq } from "drizzle-orm";
import { reviewerTokens, users } from "@/db/schema";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { recheckCredentials } from "@/lib/auth/credential-watch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { findManagedToken, tokenViews, type ReviewerTokenView } from "./reviewer-tokens";

/**
 * Revokes a personal token: its owner's own, or anyone's for an admin. Its next request is 401 and
 * its open streams end within seconds (lib/auth/credential-watch.ts). Revoking a revoked token
 * changes nothing and answers it as it is.
 */
export async function revokeReviewerToken(
  caller: QueueCaller,
  tokenId: string,
): Promise<ReviewerTokenView> {
  const manager = await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const token = await findManagedToken(db, manager, tokenId);
    if (token.revokedAt !== null) return manager;
    const now = Date.now();
    const own = token.userId === manager.reviewer?.id;
    const [owner] = await db
      .select({ email: users.email })
      .from(users)
      .where(eq(users.id, token.userId));
    await commit([
      // revoking someone else's token takes an admin still
      ...(own ? [] : stillAdmin(manager)),
      updateRow(reviewerTokens, { revokedAt: now }, "id = ? and revoked_at is null", token.id),
      changedRow(),
      eventRows({
        type: "reviewer_token.revoked",
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: {
          tokenId: token.id,
          userId: token.userId,
          userEmail: owner?.email ?? null,
          tokenPrefix: token.tokenPrefix,
        },
      }),
    ]);
    return manager;
  });
  forgetCachedActors();
  void recheckCredentials();
  const [view] = await tokenViews(getDb(), { ...manager, isAdmin: true }, { id: tokenId });
  return view!;
}
