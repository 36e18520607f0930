import { apiRoute, json } from "@/lib/http/api-route";
import { recordToolEvent } from "@/lib/runs/record-tool-event";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await recordToolEvent(actor, params.runId, body), 201),
);
