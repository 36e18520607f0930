import { AsyncLocalStorage } from "node:async_hooks";
import { and, eq, isNotNull } from "drizzle-orm";
import type { APIError as BetterAuthApiError } from "better-auth/api";
import type { GenericOAuthConfig } from "better-auth/plugins";
import { getDb } from "@/db/client";
import { accounts, users } from "@/db/schema";
import { changedRow, guard, statement, untilWritten, writeBatch } from "@/db/write-batch";
import { refuseSignUp } from "@/lib/auth/better-auth";
import { eventRows } from "@/lib/events/append-event";
import { applyGroupRoles, groupsOf, SSO_EVENT_ACTOR } from "./apply-group-roles";
import { ssoAccountId, SSO_PROVIDER_ID, type SsoRuntimeConfig } from "./sso-settings";

// The rules of a single sign-on, applied inside better-auth's own callback (its state, PKCE, nonce
// and ID-token checks come first; sso-auth.ts hands these to lib/auth/better-auth.ts's hooks):
// - someone already linked to the provider — the same issuer and `sub` (ssoAccountId) — or a
//   Countersign person whose email the identity provider says it verified, signs in as that
//   person (better-auth's account linking);
// - but never into an account whose password someone else may have chosen (vouched, below):
//   "password_proof_required" until its holder proves the password in the same browser;
// - anyone else is refused ("signup_disabled"), unless the admin allowed their email's domain and
//   the provider verified the email: then they get an account with no queue (or the queues their
//   groups map to);
// - a deactivated person is refused (the session hook, "account_deactivated");
// - the groups claim's mapped queue roles are granted at each sign-in (apply-group-roles.ts).
// Each refusal comes back to the sign-in page as `?error=<code>`, which it explains.

/** What one callback learned from the provider's profile, for the hooks that run after it. */
type SignInContext = {
  groups: string[];
  /** the person whose session cookie came with the request (signed in with their password) */
  signedInUserId: string | null;
};
const signInContext = new AsyncLocalStorage<SignInContext>();

/**
 * Runs one single sign-on request, so its hooks can read what its profile said and who the
 * browser was already signed in as.
 */
export function runSsoRequest<T>(
  work: () => Promise<T>,
  signedInUserId: string | null = null,
): Promise<T> {
  return signInContext.run({ groups: [], signedInUserId }, work);
}

/** The claims of an ID token (its signature, issuer and audience already checked by better-auth). */
function idTokenClaims(idToken: string | undefined): Record<string, unknown> | null {
  const payload = idToken?.split(".")[1];
  if (!payload) return null;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
    return typeof claims === "object" && claims !== null
      ? (claims as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function ssoProviderConfig(sso: SsoRuntimeConfig): GenericOAuthConfig {
  return {
    providerId: SSO_PROVIDER_ID,
    name: sso.displayName,
    discoveryUrl: `${sso.issuer}/.well-known/openid-configuration`,
    // Skip the provider rather than trust an ID token that cannot be verified against the issuer's keys.
    requireIdTokenVerification: true,
    clientId: sso.clientId,
    clientSecret: sso.clientSecret,
    // The secret goes only to the token endpoint it was given for (saved with it, issue 24 hole
    // 5), never to one a changed discovery document names later.
    ...(sso.tokenEndpoint && { tokenUrl: sso.tokenEndpoint }),
    // A link is the issuer and the subject there, never the subject alone (ssoAccountId). The ID
    // token was verified against this issuer's keys (requireIdTokenVerification) before this runs;
    // one naming another issuer is refused rather than keyed.
    accountSubject: ({ tokens }) => {
      const claims = idTokenClaims(tokens.idToken);
      if (typeof claims?.sub !== "string" || claims.sub === "" || claims.iss !== sso.issuer)
        throw new Error("The ID token names no subject of the configured issuer.");
      return ssoAccountId(sso.issuer, claims.sub);
    },
    scopes: ["openid", "email", "profile"],
    pkce: true,
    // No new accounts at all unless the admin allowed some email domains.
    disableSignUp: sso.allowedDomains.length === 0,
    mapProfileToUser: (profile) => {
      const context = signInContext.getStore();
      if (context) context.groups = groupsOf(profile[sso.groupsClaim]);
      return {};
    },
  };
}

/** user.create.before: only a verified email in an allowed domain becomes a new person. */
export function refuseUnlessAllowed(
  sso: SsoRuntimeConfig,
  user: { email: string; emailVerified: boolean },
  APIError: typeof BetterAuthApiError,
): void {
  const domain = user.email.toLowerCase().split("@").pop() ?? "";
  if (!sso.allowedDomains.includes(domain)) refuseSignUp(APIError);
  if (!user.emailVerified)
    throw new APIError("FORBIDDEN", {
      code: "email_not_verified",
      message: "The identity provider has not verified this email.",
    });
}

/**
 * Whether single sign-on may put someone into this account (issue 24, hole 2). A password on it
 * may have been chosen by someone other than the email's owner — a lead who invited the address
 * and redeemed the invite link themselves, or anyone handed a reset link — and whatever the
 * provider's groups grant would then be theirs too. So an account with a password signs in by
 * single sign-on only once the password is vouched for (`email_verified`): it was made by the
 * operator (`npm run admin`, first-run setup), or its holder signed in with it and then with
 * single sign-on in the same browser — both credentials in one hand. That proof is taken here:
 * the request carries a session of this very account. Otherwise the sign-in is refused with
 * `password_proof_required`; someone who does not know the password asks an admin for a reset
 * link (which ends the other holder's password and sessions), signs in with it, then with SSO.
 * Accounts without a password (an invite not yet redeemed, people who joined by SSO) need no
 * proof. The same rule in SQL (vouched.ts) is checked again in the write that grants group roles.
 */
export async function admitToAccount(
  userId: string,
  APIError: typeof BetterAuthApiError,
): Promise<void> {
  await untilWritten(async () => {
    const db = getDb();
    const [user] = await db
      .select({ email: users.email, name: users.name, emailVerified: users.emailVerified })
      .from(users)
      .where(eq(users.id, userId));
    // a person being created right now (an allowed domain) has no password
    if (!user || user.emailVerified) return;
    const [password] = await db
      .select({ id: accounts.id, hash: accounts.password })
      .from(accounts)
      .where(
        and(
          eq(accounts.userId, userId),
          eq(accounts.providerId, "credential"),
          isNotNull(accounts.password),
        ),
      );
    if (!password) return;
    if (signInContext.getStore()?.signedInUserId !== userId)
      throw new APIError("FORBIDDEN", {
        code: "password_proof_required",
        message: "Sign in with this account's password once, then with single sign-on.",
      });
    await writeBatch([
      // The password proven is the one read: a reset redeemed meanwhile (someone else's choice
      // again) makes the write find nothing to vouch for, and the next attempt refuses.
      guard(
        "exists (select 1 from account where id = ? and password = ?)",
        password.id,
        password.hash,
      ),
      statement(`update "user" set email_verified = 1 where id = ? and email_verified = 0`, userId),
      changedRow(),
      eventRows({
        type: "person.sso_password_proven",
        queueId: null,
        actor: { kind: "reviewer", id: userId, name: user.name },
        data: { userId, email: user.email },
      }),
    ]);
  });
}

/** session.create.after of a single sign-on: its groups' queue roles. */
export async function applySignInGroupRoles(sso: SsoRuntimeConfig, userId: string): Promise<void> {
  const context = signInContext.getStore();
  if (!context || sso.groupRoles.length === 0) return;
  await applyGroupRoles(userId, context.groups, sso.groupRoles);
}

// The two trust changes better-auth makes itself during a single sign-on, recorded for the audit
// log. better-auth writes its rows through its own adapter, so these events follow its write
// rather than share its batch; they are appended once the row exists, and a failure to append
// fails the sign-in (better-auth's "after" hooks are awaited).

/** account.create.after: a person's first single sign-on linked the provider's account to them. */
export async function recordSsoLink(account: { providerId: string; userId: string }) {
  if (account.providerId !== SSO_PROVIDER_ID) return;
  const now = Date.now();
  await writeBatch([
    // The person's open invite and reset links die: whoever holds one (the lead who invited the
    // address) could otherwise set a password on the account its owner now signs in to.
    statement(
      "update person_links set expires_at = ? where user_id = ? and used_at is null and expires_at > ?",
      now,
      account.userId,
      now,
    ),
    // The provider verified the email (better-auth links only then) and no password someone else
    // chose is on the account: the email is its owner's. (better-auth's own "mark verified on
    // link" is stripped, lib/auth/better-auth.ts: it would vouch for a password too.)
    statement(
      `update "user" set email_verified = 1 where id = ? and not exists (select 1 from account where user_id = ? and provider_id = 'credential' and password is not null)`,
      account.userId,
      account.userId,
    ),
    eventRows({
      type: "person.sso_linked",
      queueId: null,
      actor: SSO_EVENT_ACTOR,
      data: { userId: account.userId },
    }),
  ]);
}

/** user.create.after: someone from an allowed domain got an account at their first sign-in. */
export async function recordSsoNewcomer(user: { id: string; name: string; email: string }) {
  await writeBatch([
    eventRows({
      type: "person.joined_by_sso",
      queueId: null,
      actor: SSO_EVENT_ACTOR,
      data: { userId: user.id, name: user.name, email: user.email },
    }),
  ]);
}
