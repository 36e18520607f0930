import { apiRoute, json } from "@/lib/http/api-route";
import { heartbeat } from "@/lib/runs/heartbeat";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await heartbeat(actor, params.runId, body)),
);
