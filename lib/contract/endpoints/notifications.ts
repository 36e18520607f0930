import { json } from "@/lib/http/api-route";
import {
  listNotificationPreferences,
  NotificationPreferenceInput,
  setNotificationPreference,
} from "@/lib/notifications/preferences";
import { defineEndpoint } from "../endpoint";

export const notificationEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/me/notification-preferences",
    auth: "reviewer",
    operationId: "listNotificationPreferences",
    tag: "Notifications",
    summary: "The caller's notification preferences, one per open queue of theirs",
    description:
      "A queue never saved answers the defaults: delivery off. emailConfigured says whether this server sends email at all.",
    ok: { status: 200, schema: "NotificationPreferenceList" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await listNotificationPreferences(actor)),
  }),
  defineEndpoint({
    method: "PUT",
    path: "/me/notification-preferences/{queueId}",
    auth: "reviewer",
    operationId: "setNotificationPreference",
    tag: "Notifications",
    summary: "Replace the caller's notification preferences for one of their queues",
    description:
      "Emails are sent at once, or gathered into a digest every digestMinutes (5–1440), or not at all, for the events switched on. A queue the caller is not in is 404. Notifications honour the queue's visibility when they are sent: someone who left the queue gets nothing more. Writes a notifications.preferences_updated event.",
    body: NotificationPreferenceInput,
    ok: { status: 200, schema: "NotificationPreference" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ params, actor, body }) =>
      json(await setNotificationPreference(actor, params.queueId, body)),
  }),
];
