import { cancelBatch } from "@/lib/batches/cancel-batch";
import { apiRoute, json } from "@/lib/http/api-route";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await cancelBatch(actor, params.batchId, body)),
);
