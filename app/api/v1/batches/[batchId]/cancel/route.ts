import { cancelBatch } from "@/lib/batches/cancel-batch";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await cancelBatch(actor, params.batchId, body)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
