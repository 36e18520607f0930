import { getDb } from "@/db/client";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { managerOf, requireAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { readStoredSsoSettings, ssoRedirectUri, ssoSettingsView } from "./sso-settings";

/**
 * `GET /sso` (admins): the single sign-on settings without the client secret (only that one is
 * set), or `configured: false` with the redirect URI to register at the identity provider.
 */
export async function getSsoSettings(caller: QueueCaller) {
  const db = getDb();
  requireAdmin(await managerOf(db, caller), "see the single sign-on settings");
  const read = await readStoredSsoSettings(db);
  return read
    ? { configured: true as const, settings: ssoSettingsView(read.settings, publicBaseUrl()) }
    : { configured: false as const, redirectUri: ssoRedirectUri(publicBaseUrl()) };
}

/** For the sign-in page: the button's label when single sign-on is on, else null. Anyone may ask. */
export async function ssoButtonLabel(): Promise<string | null> {
  const read = await readStoredSsoSettings(getDb());
  return read?.settings.enabled ? read.settings.displayName : null;
}
