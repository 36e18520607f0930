import { apiRoute, json } from "@/lib/http/api-route";
import { claimRun } from "@/lib/runs/claim-run";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await claimRun(actor, params.runId, body)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
