import { apiRoute, json } from "@/lib/http/api-route";
import { archiveQueue } from "@/lib/queues/archive-queue";

export const POST = apiRoute<{ queueId: string }>(async ({ params, actor }) =>
  json(await archiveQueue(actor, params.queueId)),
);
