import { inArray } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, appSettings, mcpGateways } from "@/db/schema";
import { updateRow, writeBatch, type Statement } from "@/db/write-batch";
import { AUDIT_KEY_SETTING } from "@/lib/audit/signing-key";
import { AUTH_SECRET_SETTING } from "@/lib/auth/better-auth";
import {
  configuredSecretKeys,
  isSealedWith,
  openSecret,
  sealSecret,
  SECRET_PLACES,
} from "@/lib/auth/sealed-secrets";
import { readStoredSsoSettings, SSO_SECRET_PLACE, SSO_SETTING } from "@/lib/sso/sso-settings";

// A start-up step (lib/server-start.ts), beside it at the top of lib/: it reads the secrets every
// folder keeps — agent keys' webhook secrets, gateways' headers, the session secret, the audit
// key, single sign-on's client secret — so it sits above all of them.

/** The settings that hold a sealed secret, and the place each is bound to. */
const SEALED_SETTINGS: Record<string, string> = {
  [AUTH_SECRET_SETTING]: SECRET_PLACES.authSecret,
  [AUDIT_KEY_SETTING]: SECRET_PLACES.auditSigningKey,
};

/**
 * At start-up: checks that every stored secret opens with the configured keys (a server that
 * cannot read them says so now, not at the first webhook or sign-in), and seals again, with the
 * current key, those stored in plain text or with an older key. Each rewrite is conditional on
 * the value read, so instances starting together do not undo each other; re-encrypting changes
 * no state anyone can see, so it writes no event. Returns how many values it sealed.
 */
export async function sealStoredSecrets(): Promise<number> {
  const keys = configuredSecretKeys();
  const db = getDb();
  const [webhookSecrets, authSecrets, gatewayHeaders] = await Promise.all([
    db.select({ id: agentKeys.id, stored: agentKeys.webhookSecret }).from(agentKeys),
    db
      .select({ key: appSettings.key, stored: appSettings.value })
      .from(appSettings)
      .where(inArray(appSettings.key, Object.keys(SEALED_SETTINGS))),
    db.select({ id: mcpGateways.id, stored: mcpGateways.headers }).from(mcpGateways),
  ]);
  const rewrites: Statement[] = [];
  const reseal = (stored: string, place: string, write: (sealed: string) => Statement) => {
    const secret = openSecret(stored, place, keys); // throws, naming the key it needs
    if (keys[0] && !isSealedWith(stored, keys[0]))
      rewrites.push(write(sealSecret(secret, place, keys)));
  };
  for (const { id, stored } of webhookSecrets) {
    reseal(stored, SECRET_PLACES.webhookSecret(id), (sealed) =>
      updateRow(agentKeys, { webhookSecret: sealed }, "id = ? and webhook_secret = ?", id, stored),
    );
  }
  for (const { id, stored } of gatewayHeaders) {
    reseal(stored, SECRET_PLACES.mcpGatewayHeaders(id), (sealed) =>
      updateRow(mcpGateways, { headers: sealed }, "id = ? and headers = ?", id, stored),
    );
  }
  for (const { key, stored } of authSecrets) {
    reseal(stored, SEALED_SETTINGS[key]!, (sealed) =>
      updateRow(appSettings, { value: sealed }, "key = ? and value = ?", key, stored),
    );
  }
  // The single sign-on client secret sits inside its setting's JSON (lib/sso/sso-settings.ts).
  const sso = await readStoredSsoSettings(db);
  if (sso) {
    reseal(sso.settings.clientSecret, SSO_SECRET_PLACE, (sealed) =>
      updateRow(
        appSettings,
        { value: JSON.stringify({ ...sso.settings, clientSecret: sealed }) },
        "key = ? and value = ?",
        SSO_SETTING,
        sso.stored,
      ),
    );
  }
  if (rewrites.length > 0) await writeBatch(rewrites);
  return rewrites.length;
}
