import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { setNotificationPreference } from "@/lib/notifications/preferences";

type Params = { queueId: string };

export const PUT = apiRoute<Params>(async ({ params, actor, body }) =>
  json(await setNotificationPreference(actor, params.queueId, body)),
);

export const { GET, HEAD, POST, PATCH, DELETE, OPTIONS } = refuseOtherMethods("PUT");
