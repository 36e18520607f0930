import { decideCall } from "@/lib/approvals/decide-call";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ callId: string }>(async ({ params, body, actor }) =>
  json(await decideCall(actor, params.callId, body)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
