import { and, eq, sql } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { reviewClaims, users } from "@/db/schema";

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
