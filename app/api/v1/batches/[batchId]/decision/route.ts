import { decideBatch } from "@/lib/approvals/decide-batch";
import { apiRoute, json } from "@/lib/http/api-route";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await decideBatch(actor, params.batchId, body)),
);
