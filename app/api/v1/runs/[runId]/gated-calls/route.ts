import { recordGatedCall } from "@/lib/gated-calls/record-gated-call";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { hostedGatewayOf } from "@/lib/mcp-gateways/hosted-call-marker";

export const POST = apiRoute<{ runId: string }>(async ({ request, params, body, actor }) => {
  const { answer, created } = await recordGatedCall(
    actor,
    params.runId,
    body,
    hostedGatewayOf(request),
  );
  return json(answer, created ? 201 : 200);
});

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
