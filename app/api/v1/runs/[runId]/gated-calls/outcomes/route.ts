import { reportGatedOutcomes } from "@/lib/gated-calls/report-gated-outcomes";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await reportGatedOutcomes(actor, params.runId, body), 201),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
