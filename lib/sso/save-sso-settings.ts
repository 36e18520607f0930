import { inArray } from "drizzle-orm";
import { getDb } from "@/db/client";
import { queues } from "@/db/schema";
import { changedRow, statement, untilWritten, type Statement } from "@/db/write-batch";
import { parseInput } from "@/lib/api/parse";
import { publicBaseUrl } from "@/lib/api/views";
import { sealSecret } from "@/lib/auth/sealed-secrets";
import { InvalidRequestError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/transact";
import {
  managerOf,
  requireAdmin,
  stillAdmin,
  stillOpen,
  type QueueCaller,
} from "@/lib/queues/queue-access";
import { checkIssuer } from "./check-issuer";
import {
  readStoredSsoSettings,
  SSO_SECRET_PLACE,
  SSO_SETTING,
  SsoSettingsInput,
  ssoSettingsView,
  type SsoSettingsView,
  type StoredSsoSettings,
} from "./sso-settings";

/**
 * `PUT /sso` (admins): replaces the single sign-on settings. Everything is checked before the
 * write — the body, the caller, the queues of the group mappings (open ones), and the issuer's
 * discovery document — so a bad issuer or queue writes nothing. One write batch: the setting,
 * compare-and-swapped on the value read, and an `sso.settings_updated` event that names what
 * changed but never the secret.
 */
export async function saveSsoSettings(
  caller: QueueCaller,
  body: unknown,
): Promise<SsoSettingsView> {
  const input = parseInput(SsoSettingsInput, body);
  const db = getDb();
  const manager = await managerOf(db, caller);
  requireAdmin(manager, "configure single sign-on");

  const queueIds = [...new Set(input.groupRoles.map((m) => m.queueId))];
  const open = new Set(
    queueIds.length === 0
      ? []
      : (
          await db
            .select({ id: queues.id, archivedAt: queues.archivedAt })
            .from(queues)
            .where(inArray(queues.id, queueIds))
        )
          .filter((q) => q.archivedAt === null)
          .map((q) => q.id),
  );
  const missing = input.groupRoles.flatMap((m, i) =>
    open.has(m.queueId)
      ? []
      : [{ path: `groupRoles.${i}.queueId`, message: "no open queue has this id" }],
  );
  if (missing.length > 0)
    throw new InvalidRequestError(
      `Invalid request: ${missing[0]!.path}: ${missing[0]!.message}`,
      missing,
    );
  await checkIssuer(input.issuer);

  return untilWritten(async () => {
    const current = await readStoredSsoSettings(db);
    if (!current && input.clientSecret === undefined)
      throw new InvalidRequestError("Invalid request: clientSecret: required the first time", [
        { path: "clientSecret", message: "required the first time" },
      ]);
    const now = Date.now();
    const { clientSecret, ...rest } = input;
    const settings: StoredSsoSettings = {
      ...rest,
      clientSecret:
        clientSecret === undefined
          ? current!.settings.clientSecret
          : sealSecret(clientSecret, SSO_SECRET_PLACE),
      updatedAt: now,
      updatedBy: { id: manager.eventActor.id, name: manager.eventActor.name },
    };
    const value = JSON.stringify(settings);
    const write: Statement = current
      ? statement(
          "update app_settings set value = ? where key = ? and value = ?",
          value,
          SSO_SETTING,
          current.stored,
        )
      : statement(
          "insert into app_settings (key, value, created_at) select ?, ?, ? where not exists (select 1 from app_settings where key = ?)",
          SSO_SETTING,
          value,
          now,
          SSO_SETTING,
        );
    await commit([
      ...stillAdmin(manager),
      ...queueIds.map((id) => stillOpen(id)),
      write,
      changedRow(),
      eventRows({
        type: "sso.settings_updated",
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: {
          enabled: input.enabled,
          displayName: input.displayName,
          issuer: input.issuer,
          clientId: input.clientId,
          clientSecretChanged: clientSecret !== undefined,
          allowedDomains: input.allowedDomains,
          groupsClaim: input.groupsClaim,
          groupRoles: input.groupRoles,
        },
      }),
    ]);
    return ssoSettingsView(settings, publicBaseUrl());
  });
}
