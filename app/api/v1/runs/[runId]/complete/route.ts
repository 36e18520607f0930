import { apiRoute, json } from "@/lib/http/api-route";
import { completeRun } from "@/lib/runs/complete-run";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await completeRun(actor, params.runId, body)),
);
