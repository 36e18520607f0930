import { decideBatch } from "@/lib/approvals/decide-batch";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await decideBatch(actor, params.batchId, body)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
