import { apiRoute, json } from "@/lib/http/api-route";
import { getQueue } from "@/lib/queues/get-queue";
import { updateQueue } from "@/lib/queues/update-queue";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute<{ queueId: string }>(async ({ params, actor }) =>
  json(await getQueue(actor, params.queueId)),
);

export const PATCH = apiRoute<{ queueId: string }>(async ({ params, body, actor }) =>
  json(await updateQueue(actor, params.queueId, body)),
);

export const { POST, PUT, DELETE, OPTIONS } = refuseOtherMethods("GET", "PATCH");
