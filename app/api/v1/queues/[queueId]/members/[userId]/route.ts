import { apiRoute, json } from "@/lib/http/api-route";
import { changeRole } from "@/lib/queues/change-role";
import { removeMember } from "@/lib/queues/remove-member";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

type Params = { queueId: string; userId: string };

export const PATCH = apiRoute<Params>(async ({ params, body, actor }) =>
  json(await changeRole(actor, params.queueId, params.userId, body)),
);

export const DELETE = apiRoute<Params>(async ({ params, actor }) =>
  json(await removeMember(actor, params.queueId, params.userId)),
);

export const { GET, HEAD, POST, PUT, OPTIONS } = refuseOtherMethods("PATCH", "DELETE");
