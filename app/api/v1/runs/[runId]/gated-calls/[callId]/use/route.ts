import { useGatedDecision } from "@/lib/gated-calls/use-gated-decision";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ runId: string; callId: string }>(async ({ params, actor }) =>
  json(await useGatedDecision(actor, params.runId, params.callId)),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
