import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { disableMcpGateway } from "@/lib/mcp-gateways/disable-mcp-gateway";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ gatewayId: string }>(async ({ actor, params }) =>
  json({ gateway: await disableMcpGateway(actor, params.gatewayId) }),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
