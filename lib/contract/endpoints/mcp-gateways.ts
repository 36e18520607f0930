import { CreateMcpGatewayInput, createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import { json } from "@/lib/http/api-route";
import { listMcpGateways } from "@/lib/mcp-gateways/list-mcp-gateways";
import { EditMcpGatewayInput, editMcpGateway } from "@/lib/mcp-gateways/edit-mcp-gateway";
import { disableMcpGateway } from "@/lib/mcp-gateways/disable-mcp-gateway";
import { defineEndpoint } from "../endpoint";

export const mcpGatewayEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/mcp-gateways",
    auth: "reviewer",
    operationId: "listMcpGateways",
    tag: "McpGateways",
    summary: "Hosted MCP gateways, with the endpoint to give agents and the agent keys allowed",
    description: "Any reviewer. Header values are never returned, only their names.",
    ok: { status: 200, schema: "McpGatewayList" },
    errors: [401, 403],
    handler: async ({ actor }) => json({ gateways: await listMcpGateways(actor) }),
  }),
  defineEndpoint({
    method: "POST",
    path: "/mcp-gateways",
    auth: "reviewer",
    operationId: "createMcpGateway",
    tag: "McpGateways",
    summary: "Register an upstream MCP server (admins)",
    description:
      "url is checked as webhook targets are (public http(s) addresses, unless the operator allows the host in CALLBACK_ALLOWED_HOSTS), when saved and again when each session connects; it may carry no userinfo and no credential-like query parameter (token, api_key, sig, X-Amz-Signature…: tokens belong in headers). headers are refused (400) over plain http:// unless the host is loopback or listed in MCP_GATEWAY_PLAIN_HTTP_HOSTS. headers (the upstream's own token) are write-only: stored sealed, never returned, never given to agents. agents are agent key ids. 409 already_exists for a taken name. Writes an mcp_gateway.created event (header names only).",
    body: CreateMcpGatewayInput,
    ok: { status: 201, schema: "McpGatewayAnswer" },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ actor, body }) => json({ gateway: await createMcpGateway(actor, body) }, 201),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/mcp-gateways/{gatewayId}",
    auth: "reviewer",
    operationId: "editMcpGateway",
    tag: "McpGateways",
    summary: "Edit a hosted MCP gateway (admins), compare-and-swapped on expectedRevision",
    description:
      "Only the fields given change; headers replace every header (omit to keep them). A url on another origin needs the headers again; the url and headers rules of createMcpGateway apply. status: enabled turns a disabled gateway back on. Sessions open on the old settings end at their next request. 409 stale_revision or already_exists with current. Writes an mcp_gateway.updated event naming what changed.",
    body: EditMcpGatewayInput,
    ok: { status: 200, schema: "McpGatewayAnswer" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ actor, params, body }) =>
      json({ gateway: await editMcpGateway(actor, params.gatewayId, body) }),
  }),
  defineEndpoint({
    method: "POST",
    path: "/mcp-gateways/{gatewayId}/disable",
    auth: "reviewer",
    operationId: "disableMcpGateway",
    tag: "McpGateways",
    summary: "Disable a hosted MCP gateway (admins): agents can no longer connect",
    description:
      "Open sessions end at their next request. Disabling a disabled gateway answers it unchanged. Writes an mcp_gateway.disabled event.",
    ok: { status: 200, schema: "McpGatewayAnswer" },
    errors: [401, 403, 404],
    handler: async ({ actor, params }) =>
      json({ gateway: await disableMcpGateway(actor, params.gatewayId) }),
  }),
];
