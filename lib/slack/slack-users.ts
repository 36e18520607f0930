import { and, isNull, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { users } from "@/db/schema";
import type { ReviewerActor } from "@/lib/auth/actor";
import { slackClient } from "./config";

// A Slack user is a Countersign reviewer when the email on their Slack profile (users.info, scope
// users:read.email) is the email of an active Countersign account. The Slack lookup is cached: a
// burst of clicks must not spend the 3 s Slack gives an interaction on the same lookup, nor hit
// its rate limit. The Countersign side is read every time, so a deactivation counts at once.

const CACHE_MS = 10 * 60_000;
const MAX_CACHED = 5000;
const emails = new Map<string, { email: string | null; at: number }>();

/** The email of a Slack user's profile, or null when Slack has none (or no such user). */
export async function slackUserEmail(slackUserId: string): Promise<string | null> {
  const cached = emails.get(slackUserId);
  if (cached && Date.now() - cached.at < CACHE_MS) return cached.email;
  let email: string | null = null;
  try {
    const answer = await slackClient({ interactive: true }).users.info({ user: slackUserId });
    email = answer.user?.profile?.email?.trim().toLowerCase() || null;
  } catch (error) {
    // Only a user Slack does not know is an answer; anything else (down, rate limited) is not
    // cached, so the next click asks again.
    const code = (error as { data?: { error?: string } }).data?.error;
    if (code !== "user_not_found") throw error;
  }
  if (emails.size >= MAX_CACHED) emails.clear();
  emails.set(slackUserId, { email, at: Date.now() });
  return email;
}

/** The active reviewer a Slack user is, or null (no email on Slack, no such account, deactivated). */
export async function reviewerForSlackUser(slackUserId: string): Promise<ReviewerActor | null> {
  const email = await slackUserEmail(slackUserId);
  if (!email) return null;
  const [user] = await getDb()
    .select({ id: users.id, name: users.name, email: users.email })
    .from(users)
    .where(and(sql`lower(${users.email}) = ${email}`, isNull(users.deactivatedAt)));
  return user ? { kind: "reviewer", ...user } : null;
}
