import { apiRoute, json } from "@/lib/http/api-route";
import { requestRollback } from "@/lib/runs/request-rollback";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await requestRollback(actor, params.runId, body), 202),
);
