import { apiRoute, json } from "@/lib/http/api-route";
import { heartbeat } from "@/lib/runs/heartbeat";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ runId: string }>(async ({ params, body, actor }) =>
  json(await heartbeat(actor, params.runId, body)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
