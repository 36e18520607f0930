import { apiRoute, json } from "@/lib/http/api-route";
import { requestRollback } from "@/lib/runs/request-rollback";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await requestRollback(actor, params.runId, body), 202),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
