import { AsyncLocalStorage } from "node:async_hooks";
import type { APIError as BetterAuthApiError } from "better-auth/api";
import type { GenericOAuthConfig } from "better-auth/plugins";
import { writeBatch } from "@/db/write-batch";
import { eventRows } from "@/lib/events/append-event";
import { applyGroupRoles, groupsOf, SSO_EVENT_ACTOR } from "./apply-group-roles";
import { SSO_PROVIDER_ID, type SsoRuntimeConfig } from "./sso-settings";

// The rules of a single sign-on, applied inside better-auth's own callback (its state, PKCE, nonce
// and ID-token checks come first, lib/auth/better-auth.ts):
// - someone already linked to the provider, or a Countersign person whose email the identity
//   provider says it verified, signs in as that person (better-auth's account linking);
// - anyone else is refused ("signup_disabled"), unless the admin allowed their email's domain and
//   the provider verified the email: then they get an account with no queue (or the queues their
//   groups map to);
// - a deactivated person is refused (the session hook, "account_deactivated");
// - the groups claim's mapped queue roles are granted at each sign-in (apply-group-roles.ts).
// Each refusal comes back to the sign-in page as `?error=<code>`, which it explains.

/** What one callback learned from the provider's profile, for the hooks that run after it. */
type SignInContext = { groups: string[] };
const signInContext = new AsyncLocalStorage<SignInContext>();

/** Runs one single sign-on request, so its hooks can read what its profile said. */
export function runSsoRequest<T>(work: () => Promise<T>): Promise<T> {
  return signInContext.run({ groups: [] }, work);
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
  sso: SsoRuntimeConfig | null,
  user: { email: string; emailVerified: boolean },
  APIError: typeof BetterAuthApiError,
): void {
  const domain = user.email.toLowerCase().split("@").pop() ?? "";
  if (!sso || !sso.allowedDomains.includes(domain))
    throw new APIError("FORBIDDEN", {
      code: "signup_disabled",
      message: "No Countersign account matches this email.",
    });
  if (!user.emailVerified)
    throw new APIError("FORBIDDEN", {
      code: "email_not_verified",
      message: "The identity provider has not verified this email.",
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
  await writeBatch([
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
