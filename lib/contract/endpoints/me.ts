import { UpdateMySettingsInput, getMySettings, updateMySettings } from "@/lib/people/my-settings";
import { json } from "@/lib/http/api-route";
import { defineEndpoint } from "../endpoint";

export const meEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/me",
    auth: "reviewer",
    operationId: "getMySettings",
    tag: "Me",
    summary: "The caller's own settings",
    ok: { status: 200, schema: "MySettings" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await getMySettings(actor)),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/me",
    auth: "reviewer",
    operationId: "updateMySettings",
    tag: "Me",
    summary: "Change the caller's own settings",
    description:
      "timeZone (an IANA name such as Europe/Berlin, or null to follow the browser) sets the zone every time is shown to the caller in: relative times, their tooltips, the history's day filters and notification emails. The API's own times stay ISO-8601 UTC. An unknown zone is 400 and changes nothing. shortcutsEnabled (default true) turns the queue's single-key shortcuts (a approves, r rejects, e edits, j/k move, z undoes, ? help) on or off for the caller (WCAG 2.1.4); buttons always work. Give either or both; a field left out is unchanged. Writes a person.settings_updated event naming what changed.",
    body: UpdateMySettingsInput,
    ok: { status: 200, schema: "MySettings" },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ actor, body }) => json(await updateMySettings(actor, body)),
  }),
];
