import { apiRoute, json } from "@/lib/http/api-route";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ queueId: string }>(async ({ params, actor }) =>
  json(await archiveQueue(actor, params.queueId)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
