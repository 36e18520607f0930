import { randomBytes } from "node:crypto";
import { eq } from "drizzle-orm";
import type { APIError as BetterAuthApiError } from "better-auth/api";
import type { GenericOAuthConfig } from "better-auth/plugins";
import { getDb, getLockedDb, writeTransaction } from "@/db/client";
import { statement, writeBatch } from "@/db/write-batch";
import { accounts, appSettings, sessions, users, verifications } from "@/db/schema";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { CLIENT_ADDRESS_HEADER } from "./client-address";
import { forgetCachedActors } from "./actor-cache";
import { hashSessionTokens } from "./hashed-session-tokens";
import { countAttempt } from "./rate-limit-counts";
import { openSecret, sealSecret, SECRET_PLACES } from "./sealed-secrets";
import { setting } from "@/lib/config/settings";
import { storableName } from "@/lib/text/stored-text";

/** The app_settings key of the generated session secret (resealed at start: lib/seal-stored-secrets.ts). */
export const AUTH_SECRET_SETTING = "auth_secret";

/**
 * The secret that signs session cookies: BETTER_AUTH_SECRET, else one generated on first use and
 * kept in the database, so every instance over the database (and every restart) agrees on it
 * (encrypted there when COUNTERSIGN_SECRET_KEY is set: lib/auth/sealed-secrets.ts). Other signatures
 * (the card links in emails, lib/email/card-links.ts) use keys derived from it.
 */
export async function authSecret(): Promise<string> {
  const fromEnv = setting("BETTER_AUTH_SECRET");
  if (fromEnv) return fromEnv;
  const read = async () =>
    (
      await getDb()
        .select({ value: appSettings.value })
        .from(appSettings)
        .where(eq(appSettings.key, AUTH_SECRET_SETTING))
    )[0]?.value;
  const existing = await read();
  if (existing) return openSecret(existing, SECRET_PLACES.authSecret);
  await writeTransaction((tx) =>
    tx
      .insert(appSettings)
      .values({
        key: AUTH_SECRET_SETTING,
        value: sealSecret(randomBytes(32).toString("base64url"), SECRET_PLACES.authSecret),
        createdAt: Date.now(),
      })
      .onConflictDoNothing(),
  );
  return openSecret((await read())!, SECRET_PLACES.authSecret);
}

/** Where the app may be opened from: the public URL, and both loopback names of the local port. */
function trustedOrigins(): string[] {
  const port = setting("PORT");
  return [...new Set([publicBaseUrl(), `http://localhost:${port}`, `http://127.0.0.1:${port}`])];
}

/**
 * Session cookies are SameSite=Lax, so other sites cannot send them with a POST; this also
 * refuses same-site neighbours (another port, another subdomain) writing with a reviewer's session.
 */
export function isTrustedOrigin(origin: string | null): boolean {
  return origin !== null && trustedOrigins().includes(origin);
}

/**
 * What single sign-on adds to an instance: the admin's OpenID Connect provider (better-auth's
 * generic OAuth plugin) and the rules its sign-ins follow, which the database hooks below call.
 * lib/sso/sso-auth.ts makes it from the settings (the rules are lib/sso/sso-sign-in.ts) and passes
 * it in: lib/sso sits above lib/auth (its verbs ask who is calling), so this file cannot import it.
 */
export type SingleSignOn = {
  provider: GenericOAuthConfig;
  /** user.create.before: throws unless this newcomer may have an account */
  admitNewcomer(user: { email: string; emailVerified: boolean }, errors: ApiErrors): void;
  /** user.create.after */
  recordNewcomer(user: { id: string; name: string; email: string }): Promise<void>;
  /** account.create.before and session.create.before: throws unless it may sign in as this person */
  admitToAccount(userId: string, errors: ApiErrors): Promise<void>;
  /** account.create.after: a person's first single sign-on linked the provider's account */
  recordLink(account: { providerId: string; userId: string }): Promise<void>;
  /** session.create.after: the queue roles the provider's groups map to */
  applyGroupRoles(userId: string): Promise<void>;
};

/** better-auth's APIError, loaded with better-auth (createAuth): the hooks' refusals. */
type ApiErrors = typeof BetterAuthApiError;

/**
 * user.create.before of an instance without single sign-on, and of one whose rules refuse: no
 * one else gets an account (password sign-up is off; people are made by lib/people).
 */
export function refuseSignUp(errors: ApiErrors): never {
  throw new errors("FORBIDDEN", {
    code: "signup_disabled",
    message: "No Countersign account matches this email.",
  });
}

/**
 * A better-auth instance. `sso` adds single sign-on (lib/sso/sso-auth.ts); the instance without it
 * serves everything else.
 */
export async function createAuth(secret: string, sso: SingleSignOn | null = null) {
  // Loaded on first use: importing better-auth takes about 0.6 s, and the production server's own
  // copy of lib/ (lib/http/server.ts) never needs it when Next's copy made the instance first.
  const [{ betterAuth }, { drizzleAdapter }, { APIError }, { genericOAuth }] = await Promise.all([
    import("better-auth"),
    import("better-auth/adapters/drizzle"),
    import("better-auth/api"),
    import("better-auth/plugins"),
  ]);
  return betterAuth({
    appName: "Countersign",
    secret,
    baseURL: publicBaseUrl(),
    trustedOrigins: trustedOrigins(),
    // Session tokens are stored as SHA-256 hashes; the cookie carries the token itself.
    database: hashSessionTokens(
      drizzleAdapter(getLockedDb(), {
        provider: "sqlite",
        schema: { user: users, session: sessions, account: accounts, verification: verifications },
      }),
    ),
    // Accounts are made by an admin (CLI or the first-run setup page), never by strangers.
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 8 },
    session: { expiresIn: 60 * 60 * 24 * 7, updateAge: 60 * 60 * 24 },
    // Password guessing is slowed per client address, counted in the database so every instance
    // shares the count (lib/auth/rate-limit-counts.ts).
    rateLimit: {
      enabled: true,
      window: 60,
      max: 100,
      // better-auth's own default for /sign-in/* is 3 per 10 s; starting single sign-on counts
      // like a password attempt instead (each start is a round trip to the identity provider).
      customRules: {
        "/sign-in/email": { window: 60, max: signInAttemptsPerMinute() },
        "/sign-in/social": { window: 60, max: signInAttemptsPerMinute() },
      },
      customStorage: {
        async consume(key, rule) {
          const { count, windowEndsAt } = await countAttempt(`auth:${key}`, rule.window);
          if (count <= rule.max) return { allowed: true, retryAfter: null };
          return {
            allowed: false,
            retryAfter: Math.max(1, Math.ceil((windowEndsAt - Date.now()) / 1000)),
          };
        },
      },
    },
    // The address the production server stamped from the socket (and TRUSTED_PROXIES), never
    // X-Forwarded-For as the client wrote it (lib/auth/client-address.ts).
    advanced: { ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] } },
    telemetry: { enabled: false },
    plugins: sso ? [genericOAuth({ config: [sso.provider] })] : [],
    account: {
      // Single sign-on finds the Countersign person by email only when the identity provider says
      // it verified that email (the provider is not in trustedProviders, so better-auth checks
      // email_verified before linking). The person's own row is checked by Countersign's rule
      // instead of better-auth's (admitToAccount, lib/sso/sso-sign-in.ts, in the hooks below): an
      // account without a password links at once; one with a password only once that password
      // is vouched for (email_verified), so a password someone else chose never inherits what the
      // provider grants.
      accountLinking: { enabled: true, requireLocalEmailVerified: false },
      // The provider's tokens are never used after sign-in; kept encrypted, as better-auth offers.
      encryptOAuthTokens: true,
    },
    // Names and emails are part of the audit trail: only an admin changes them (lib/people). A
    // reviewer renaming themselves here rewrote who had decided what (issue 14, finding 3).
    disabledPaths: ["/update-user", "/change-email", "/delete-user"],
    // Countersign's own column, read with the session's user so a deactivated person's session
    // (deleted with the deactivation, lib/people/update-person.ts) can never count.
    user: {
      additionalFields: { deactivatedAt: { type: "number", required: false, input: false } },
    },
    databaseHooks: {
      user: {
        // Only the single sign-on instance ever creates a user (password sign-up is off, people
        // are made by lib/people): someone new from an allowed domain (lib/sso/sso-sign-in.ts).
        create: {
          before: async (user) => {
            if (!sso) refuseSignUp(APIError);
            sso.admitNewcomer(user, APIError);
            // The provider's name is stored as every other name is (issue 24, hole 6): no control
            // characters or unpaired surrogates, which it cannot be refused for.
            return { data: { name: storableName(user.name) || user.email.split("@")[0]! } };
          },
          after: async (user) => sso?.recordNewcomer(user),
        },
        update: {
          // better-auth marks a local email verified when the provider's is, at a link or sign-in
          // (an update of that flag alone: profile updates are off). In Countersign the flag
          // vouches for the account's password too (admitToAccount), so such an update is
          // dropped; only Countersign's own writes set it (lib/sso/sso-sign-in.ts).
          before: async (user) => ("emailVerified" in user ? false : undefined),
          // A reviewer token's actor carries its user's name and email (lib/auth/actor-cache.ts).
          after: async () => forgetCachedActors(),
        },
      },
      account: {
        create: {
          // Never a link into a password the provider's user may not hold (admitToAccount).
          before: async (account) => {
            if (sso && account.providerId === sso.provider.providerId)
              await sso.admitToAccount(account.userId, APIError);
          },
          // A person's first single sign-on links the provider's account to them: a trust change.
          after: async (account) => sso?.recordLink(account),
        },
      },
      // A deactivated person cannot sign in: no session is made for them.
      session: {
        create: {
          before: async (session) => {
            if (await isDeactivated(session.userId))
              throw new APIError("FORBIDDEN", {
                // the code single sign-on's error redirect carries back to the sign-in page
                code: "account_deactivated",
                message: "This account is deactivated.",
              });
            // A single sign-on into an existing link, too: the password may have changed hands
            // since the link was made (a reset link redeemed).
            await sso?.admitToAccount(session.userId, APIError);
          },
          // For the People page's "last sign-in"; a record of use, like a key's last use.
          after: async (session) => {
            await writeBatch([
              statement(
                `update "user" set last_sign_in_at = ? where id = ?`,
                Date.now(),
                session.userId,
              ),
            ]);
            // A single sign-on: the queue roles its identity-provider groups map to.
            await sso?.applyGroupRoles(session.userId);
          },
        },
      },
    },
  });
}

async function isDeactivated(userId: string): Promise<boolean> {
  const [user] = await getDb()
    .select({ deactivatedAt: users.deactivatedAt })
    .from(users)
    .where(eq(users.id, userId));
  return user?.deactivatedAt != null;
}

function signInAttemptsPerMinute(): number {
  return setting("SIGN_IN_ATTEMPTS_PER_MINUTE");
}

export type Auth = Awaited<ReturnType<typeof createAuth>>;

const globalAuth = globalThis as unknown as { __countersignAuth?: Promise<Auth> };

/** The one better-auth instance (created once the secret is known). */
export function getAuth(): Promise<Auth> {
  globalAuth.__countersignAuth ??= authSecret().then(createAuth);
  return globalAuth.__countersignAuth;
}

/** The signed-in user of a request's session cookie (and the session's id), or null. */
export async function sessionUser(
  headers: Headers,
): Promise<{ id: string; name: string; email: string; sessionId: string } | null> {
  if (!headers.get("cookie")?.includes("session_token")) return null;
  const session = await (await getAuth()).api.getSession({ headers });
  if (!session || session.user.deactivatedAt != null) return null;
  const { id, name, email } = session.user;
  return { id, name, email, sessionId: session.session.id };
}
