import { and, desc, eq, isNull } from "drizzle-orm";
import { getDb, type Executor } from "@/db/client";
import { reviewerTokens, users, type ReviewerToken } from "@/db/schema";
import { isoTime } from "@/lib/ids";
import { NotFoundError } from "@/lib/errors";
import { managerOf, type Manager, type QueueCaller } from "@/lib/queues/queue-access";

// Reviewers' personal tokens as their owners see them (admins: everyone's), by prefix: the secret
// itself is shown once, at creation, and only its hash is kept.

export const reviewerTokenPrefix = (token: string, prefix: string) =>
  token.slice(0, prefix.length + 6);

export type ReviewerTokenView = {
  id: string;
  tokenPrefix: string;
  user: { id: string; name: string; email: string };
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
};

/** The tokens the manager may see: their own, or (an admin, the operator) everyone's; `userId` narrows. */
export async function tokenViews(
  db: Executor,
  manager: Manager,
  options: { userId?: string; id?: string; activeOnly?: boolean } = {},
): Promise<ReviewerTokenView[]> {
  const owner = manager.isAdmin ? options.userId : manager.reviewer!.id;
  const rows = await db
    .select({ token: reviewerTokens, name: users.name, email: users.email })
    .from(reviewerTokens)
    .innerJoin(users, eq(users.id, reviewerTokens.userId))
    .where(
      and(
        owner ? eq(reviewerTokens.userId, owner) : undefined,
        options.id ? eq(reviewerTokens.id, options.id) : undefined,
        options.activeOnly ? isNull(reviewerTokens.revokedAt) : undefined,
      ),
    )
    .orderBy(desc(reviewerTokens.createdAt), desc(reviewerTokens.id));
  return rows.map(({ token, name, email }) => ({
    id: token.id,
    tokenPrefix: token.tokenPrefix,
    user: { id: token.userId, name, email },
    createdAt: isoTime(token.createdAt),
    lastUsedAt: isoTime(token.lastUsedAt),
    revokedAt: isoTime(token.revokedAt),
  }));
}

/** A token the manager may manage (their own; an admin's: anyone's), else 404. */
export async function findManagedToken(
  db: Executor,
  manager: Manager,
  tokenId: string,
): Promise<ReviewerToken> {
  const [token] = await db.select().from(reviewerTokens).where(eq(reviewerTokens.id, tokenId));
  if (!token || (!manager.isAdmin && token.userId !== manager.reviewer?.id))
    throw new NotFoundError("Reviewer token");
  return token;
}

/** `GET /reviewer-tokens`: the caller's own tokens; an admin's: everyone's (or one person's). */
export async function listReviewerTokens(
  caller: QueueCaller,
  options: { userId?: string } = {},
): Promise<ReviewerTokenView[]> {
  const db = getDb();
  return tokenViews(db, await managerOf(db, caller), options);
}
