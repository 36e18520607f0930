import { eq, inArray } from "drizzle-orm";
import { getDb } from "@/db/client";
import { accounts, queues } from "@/db/schema";
import { changedRow, guard, statement, untilWritten, type Statement } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { sealSecret } from "@/lib/auth/sealed-secrets";
import { InvalidRequestError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
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
  SSO_PROVIDER_ID,
  SSO_SECRET_PLACE,
  SSO_SETTING,
  SsoSettingsInput,
  ssoSettingsView,
  type SsoSettingsView,
  type StoredSsoSettings,
} from "./sso-settings";

/**
 * `PUT /sso` (admins): replaces the single sign-on settings. Everything is checked before the
 * write — the body, the caller, the queues of the group mappings (open ones), the issuer's
 * discovery document, and that a new issuer or token endpoint comes with the secret — so a bad
 * save writes nothing. One write batch: the setting, compare-and-swapped on the value read, the
 * retirement of every link when the issuer changed, and an `sso.settings_updated` event that
 * names what changed (and how many links were retired) but never the secret.
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
  const { tokenEndpoint } = await checkIssuer(input.issuer);

  return untilWritten(async () => {
    const current = await readStoredSsoSettings(db);
    const before = current?.settings;
    if (!before && input.clientSecret === undefined)
      throw new InvalidRequestError("Invalid request: clientSecret: required the first time", [
        { path: "clientSecret", message: "required the first time" },
      ]);
    // The stored secret was given for one provider: kept, it would be sent to whichever token
    // endpoint a new issuer names at the next sign-in (issue 24, hole 5). So a new issuer, or a
    // token endpoint the issuer's discovery now names elsewhere, needs the secret again.
    const issuerChanged = before !== undefined && before.issuer !== input.issuer;
    const endpointMoved =
      before?.tokenEndpoint !== undefined && before.tokenEndpoint !== tokenEndpoint;
    if ((issuerChanged || endpointMoved) && input.clientSecret === undefined) {
      const message = issuerChanged
        ? "required when the issuer changes: the stored secret is only sent to the provider it was given for"
        : `required again: the issuer's token endpoint is now ${tokenEndpoint}, and the stored secret is only sent where it was given for`;
      throw new InvalidRequestError(`Invalid request: clientSecret: ${message}`, [
        { path: "clientSecret", message },
      ]);
    }
    // A `sub` means something only at its issuer: a new issuer retires every link made with the
    // old one (issue 24, hole 1), in this same batch, and the event says how many. People then
    // link again at their first sign-in, by the email the new provider verified.
    const retiring = issuerChanged
      ? (
          await db
            .select({ id: accounts.id })
            .from(accounts)
            .where(eq(accounts.providerId, SSO_PROVIDER_ID))
        ).length
      : 0;
    const now = Date.now();
    const { clientSecret, ...rest } = input;
    const settings: StoredSsoSettings = {
      ...rest,
      clientSecret:
        clientSecret === undefined
          ? before!.clientSecret
          : sealSecret(clientSecret, SSO_SECRET_PLACE),
      tokenEndpoint,
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
    const retire: Statement[] = issuerChanged
      ? [
          statement("delete from account where provider_id = ?", SSO_PROVIDER_ID),
          // exactly the links counted: one made meanwhile aborts the batch, and the retry counts again
          guard("changes() = ?", retiring),
        ]
      : [];
    await commit([
      ...stillAdmin(manager),
      ...queueIds.map((id) => stillOpen(id)),
      write,
      changedRow(),
      ...retire,
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
          ...(issuerChanged && { previousIssuer: before!.issuer, linksRetired: retiring }),
          allowedDomains: input.allowedDomains,
          groupsClaim: input.groupsClaim,
          groupRoles: input.groupRoles,
        },
      }),
    ]);
    return ssoSettingsView(settings, publicBaseUrl());
  });
}
