import { createHash } from "node:crypto";
import { getDb } from "@/db/client";
import { authSecret, createAuth, type Auth, type SingleSignOn } from "@/lib/auth/better-auth";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { readSsoRuntimeConfig, type SsoRuntimeConfig } from "./sso-settings";
import {
  admitToAccount,
  applySignInGroupRoles,
  recordSsoLink,
  recordSsoNewcomer,
  refuseUnlessAllowed,
  ssoProviderConfig,
} from "./sso-sign-in";

const globalSsoAuth = globalThis as unknown as {
  __countersignSsoAuth?: { version: string; auth: Promise<Auth> };
};

/**
 * The instance that serves single sign-on (/sign-in/social, /callback/sso), or null when it is not
 * configured or switched off. better-auth fixes its providers when an instance is made (the generic
 * OAuth plugin fetches the issuer's discovery document then), while an admin changes the settings
 * at run time, on any instance: so each single sign-on request reads the settings (one small read,
 * on a rare path) and a new instance is made whenever they changed. It shares the secret and the
 * database with getAuth()'s (lib/auth/better-auth.ts), so the session it makes is an ordinary one
 * there; the password sign-in and every session check never depend on the identity provider
 * answering.
 */
export async function getSsoAuth(): Promise<Auth | null> {
  const config = await readSsoRuntimeConfig(getDb());
  if (!config) return null;
  // Everything the instance is built from (kept only in this process's memory).
  const version = createHash("sha256")
    .update(JSON.stringify([config, publicBaseUrl()]))
    .digest("hex");
  const cached = globalSsoAuth.__countersignSsoAuth;
  if (cached?.version === version) return cached.auth;
  const auth = authSecret().then(
    (secret) => createAuth(secret, singleSignOn(config)) as Promise<Auth>,
  );
  globalSsoAuth.__countersignSsoAuth = { version, auth };
  // A failed start (the issuer unreachable) is tried again by the next request.
  auth.catch(() => {
    if (globalSsoAuth.__countersignSsoAuth?.auth === auth)
      delete globalSsoAuth.__countersignSsoAuth;
  });
  return auth;
}

/** The provider and the rules of sso-sign-in.ts, as better-auth's hooks call them. */
function singleSignOn(config: SsoRuntimeConfig): SingleSignOn {
  return {
    provider: ssoProviderConfig(config),
    admitNewcomer: (user, errors) => refuseUnlessAllowed(config, user, errors),
    recordNewcomer: recordSsoNewcomer,
    admitToAccount,
    recordLink: recordSsoLink,
    applyGroupRoles: (userId) => applySignInGroupRoles(config, userId),
  };
}
