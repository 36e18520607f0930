import { MethodNotAllowedError, toResponse } from "@/lib/errors";
import { serveGatewayRequest } from "@/lib/mcp-gateways/hosted-sessions";

// A hosted MCP gateway (MCP streamable HTTP): the upstream MCP server an admin registered under
// this name, every tools/call put to Countersign as the calling agent key's call
// (lib/mcp-gateways/hosted-sessions.ts).
export const dynamic = "force-dynamic";

type Context = { params: Promise<{ name: string }> };

async function serve(request: Request, context: Context): Promise<Response> {
  try {
    return await serveGatewayRequest(request, (await context.params).name);
  } catch (error) {
    const response = toResponse(error);
    if (response.status === 401)
      response.headers.set(
        "www-authenticate",
        `Bearer realm="countersign"${request.headers.has("authorization") ? ', error="invalid_token"' : ""}`,
      );
    return response;
  }
}

const SERVED = ["GET", "POST", "DELETE", "OPTIONS"];

export const POST = serve;
export const GET = serve;
export const DELETE = serve;

/** Next.js's own OPTIONS would not list what the transport serves. */
export function OPTIONS(): Response {
  return new Response(null, { status: 204, headers: { allow: SERVED.join(", ") } });
}

/** The transport has no HEAD, PUT or PATCH: the contract's 405 (Next's own has no body or Allow). */
function refuse(request: Request): Response {
  return toResponse(new MethodNotAllowedError(request.method, SERVED));
}
export const HEAD = refuse;
export const PUT = refuse;
export const PATCH = refuse;
