import { z } from "zod";
import { reviewerTokens } from "@/db/schema";
import { statement, updateRow } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { recheckCredentials } from "@/lib/auth/credential-watch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";

export const SignOutEverywhereInput = z.strictObject({
  /** also revoke every personal token of the reviewer */
  revokeTokens: z.boolean().default(false),
});
export type SignOutEverywhereInput = z.input<typeof SignOutEverywhereInput>;

/**
 * "Sign out everywhere": ends every session of the calling reviewer (better-auth's rows, this
 * browser's included) and, if asked, revokes all their personal tokens, in one write batch with
 * `session.signed_out_everywhere`. Their cookies and tokens are refused from the next request on,
 * and their open streams end within seconds (lib/auth/credential-watch.ts).
 */
export async function signOutEverywhere(
  caller: Actor,
  body: unknown,
): Promise<{ sessionsEnded: number; tokensRevoked: number }> {
  const { revokeTokens } = parseInput(SignOutEverywhereInput, body ?? {});
  const reviewer = requireReviewer(caller);
  const now = Date.now();
  const [ended, revoked] = await commit([
    statement('delete from "session" where user_id = ?', reviewer.id),
    revokeTokens
      ? updateRow(
          reviewerTokens,
          { revokedAt: now },
          "user_id = ? and revoked_at is null",
          reviewer.id,
        )
      : statement("select 0"),
    eventRows({
      type: "session.signed_out_everywhere",
      queueId: null,
      actor: actorRef(reviewer),
      at: now,
      data: { userId: reviewer.id, revokeTokens },
    }),
  ]);
  forgetCachedActors();
  void recheckCredentials();
  return {
    sessionsEnded: ended!.rowsAffected,
    tokensRevoked: revokeTokens ? revoked!.rowsAffected : 0,
  };
}
