import { decideCall } from "@/lib/approvals/decide-call";
import { apiRoute, json } from "@/lib/http/api-route";

export const POST = apiRoute<{ callId: string }>(async ({ params, body, actor }) =>
  json(await decideCall(actor, params.callId, body)),
);
