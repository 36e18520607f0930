import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import { listMcpGateways } from "@/lib/mcp-gateways/list-mcp-gateways";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json({ gateways: await listMcpGateways(actor) }));

export const POST = apiRoute(async ({ actor, body }) =>
  json({ gateway: await createMcpGateway(actor, body) }, 201),
);

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
