import { apiRoute, json } from "@/lib/http/api-route";
import { getRun } from "@/lib/runs/get-run";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const GET = apiRoute<{ runId: string }>(async ({ params, actor }) =>
  json(await getRun(actor, params.runId)),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
