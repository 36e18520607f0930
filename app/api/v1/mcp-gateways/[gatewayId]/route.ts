import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { editMcpGateway } from "@/lib/mcp-gateways/edit-mcp-gateway";

export const dynamic = "force-dynamic";

export const PATCH = apiRoute<{ gatewayId: string }>(async ({ actor, params, body }) =>
  json({ gateway: await editMcpGateway(actor, params.gatewayId, body) }),
);

export const { GET, HEAD, POST, PUT, DELETE, OPTIONS } = refuseOtherMethods("PATCH");
