import { apiRoute, json } from "@/lib/http/api-route";
import { getRun } from "@/lib/runs/get-run";

export const GET = apiRoute<{ runId: string }>(async ({ params, actor }) =>
  json(await getRun(actor, params.runId)),
);
