import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "@/db/client";
import { appSettings } from "@/db/schema";
import { openSecret } from "@/lib/auth/sealed-secrets";
import { SingleLineText } from "@/lib/text/stored-text";

// Single sign-on (OpenID Connect) as an admin configured it, kept in one app_settings row so every
// instance over the database sees a change at once, without a restart (sso-auth.ts builds the
// provider from it). The client secret is stored sealed (lib/auth/sealed-secrets.ts) and never
// leaves the server: views carry only whether one is set.

export const SSO_SETTING = "sso";
/** Where the sealed client secret lives: the associated data that binds it to this setting. */
export const SSO_SECRET_PLACE = "app_settings.sso.client_secret";
/** better-auth's provider id: the callback is /api/auth/callback/sso. */
export const SSO_PROVIDER_ID = "sso";

/**
 * The account id a single sign-on link is stored under: the issuer it was made with and the
 * subject there. A `sub` is unique only within its issuer (OpenID Connect Core §2), so a link
 * keyed by `sub` alone let another provider's user with the same `sub` sign in as whoever had
 * linked it (issue 24, hole 1). An issuer URL has no fragment (IssuerUrl refuses one), so `#`
 * cannot occur in it and the pair reads back unambiguously. Links stored before this binding
 * hold the bare `sub` and so never match again: their people link again by verified email.
 */
export function ssoAccountId(issuer: string, sub: string): string {
  return `${issuer}#${sub}`;
}

export const SSO_QUEUE_ROLES = ["reviewer", "lead"] as const;

const Domain = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, {
    message: "must be a domain name such as example.com",
  });

/** An issuer: https, or http on a loopback host (an identity provider run on this machine). */
export const IssuerUrl = z
  .url({ protocol: /^https?$/ })
  .max(500)
  .transform((text) => text.replace(/\/+$/, ""))
  .refine(
    (text) => {
      const url = new URL(text);
      if (url.search || url.hash || url.username || url.password) return false;
      return url.protocol === "https:" || LOOPBACK.has(url.hostname);
    },
    { message: "must be an https:// URL (http:// only on localhost) with no query or fragment" },
  );
const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

export const SsoGroupRole = z.strictObject({
  group: SingleLineText.trim().min(1).max(200),
  queueId: SingleLineText.min(1).max(200),
  role: z.enum(SSO_QUEUE_ROLES),
});
export type SsoGroupRole = z.infer<typeof SsoGroupRole>;

export const SsoSettingsInput = z.strictObject({
  enabled: z.boolean(),
  displayName: SingleLineText.trim()
    .min(1)
    .max(60)
    .describe('shown as "Sign in with <displayName>"'),
  issuer: IssuerUrl.describe("the OpenID Connect issuer; its discovery document must answer"),
  clientId: SingleLineText.trim().min(1).max(300),
  clientSecret: z
    .string()
    .min(1)
    .max(2000)
    .optional()
    .describe(
      "write-only; leave out to keep the stored one — required the first time, and whenever the issuer (or the token endpoint its discovery document names) changes",
    ),
  allowedDomains: z
    .array(Domain)
    .max(50)
    .default([])
    .describe("people with a verified email in these domains get an account at first sign-in"),
  groupsClaim: SingleLineText.trim().min(1).max(100).default("groups"),
  groupRoles: z.array(SsoGroupRole).max(100).default([]),
});
export type SsoSettingsInput = z.input<typeof SsoSettingsInput>;

/** What is stored (the value of the `sso` app setting, as JSON). */
export type StoredSsoSettings = Omit<z.output<typeof SsoSettingsInput>, "clientSecret"> & {
  /** sealed with COUNTERSIGN_SECRET_KEY when one is set */
  clientSecret: string;
  /**
   * The token endpoint the issuer's discovery document named when the secret was given: the only
   * place the secret is ever sent (the provider is built with it, not with what discovery says at
   * sign-in). Absent in settings saved before it was recorded.
   */
  tokenEndpoint?: string;
  updatedAt: number;
  updatedBy: { id: string | null; name: string | null };
};

/** What an admin reads back: everything but the secret. */
export type SsoSettingsView = Omit<
  StoredSsoSettings,
  "clientSecret" | "updatedAt" | "tokenEndpoint"
> & {
  clientSecretSet: true;
  updatedAt: string;
  /** the address to register at the identity provider */
  redirectUri: string;
};

/** The settings and the stored text they came from (the compare-and-swap value), or null. */
export async function readStoredSsoSettings(
  db: Executor,
): Promise<{ settings: StoredSsoSettings; stored: string } | null> {
  const [row] = await db
    .select({ value: appSettings.value })
    .from(appSettings)
    .where(eq(appSettings.key, SSO_SETTING));
  if (!row) return null;
  return { settings: JSON.parse(row.value) as StoredSsoSettings, stored: row.value };
}

/** What the provider is built from: the settings with the secret opened. */
export type SsoRuntimeConfig = Omit<StoredSsoSettings, "clientSecret"> & { clientSecret: string };

export async function readSsoRuntimeConfig(db: Executor): Promise<SsoRuntimeConfig | null> {
  const read = await readStoredSsoSettings(db);
  if (!read?.settings.enabled) return null;
  const { settings } = read;
  return { ...settings, clientSecret: openSecret(settings.clientSecret, SSO_SECRET_PLACE) };
}

export function ssoRedirectUri(publicBaseUrl: string): string {
  return `${publicBaseUrl}/api/auth/callback/${SSO_PROVIDER_ID}`;
}

export function ssoSettingsView(settings: StoredSsoSettings, baseUrl: string): SsoSettingsView {
  const { clientSecret: _secret, tokenEndpoint: _endpoint, updatedAt, ...rest } = settings;
  return {
    ...rest,
    clientSecretSet: true,
    updatedAt: new Date(updatedAt).toISOString(),
    redirectUri: ssoRedirectUri(baseUrl),
  };
}
