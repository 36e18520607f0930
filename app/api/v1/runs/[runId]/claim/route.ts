import { apiRoute, json } from "@/lib/http/api-route";
import { claimRun } from "@/lib/runs/claim-run";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await claimRun(actor, params.runId, body)),
);
