import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { getDb } from "@/db/client";
import { authenticate, type AgentActor } from "@/lib/auth/actor";
import { InvalidRequestError, UnauthenticatedError, toResponse } from "@/lib/errors";
import { readJsonBody } from "@/lib/http/read-body";
import { createMcpServer } from "./mcp-server";

// The MCP endpoint's edge, stateless: every POST gets its own server and transport, so any
// process with the database can answer any request (no MCP session lives in memory), and the
// answer is plain JSON (no stream to hold open between requests).

/** A POSTed JSON-RPC message (or batch of them): body (413/415/400) → agent key (401) → MCP. */
export async function handleMcpPost(request: Request): Promise<Response> {
  try {
    const body = await readJsonBody(request);
    const agent = await authenticateAgent(request.headers);
    if (body === undefined) {
      throw new InvalidRequestError("Send a JSON-RPC message as the body.", [
        { path: "(body)", message: "required" },
      ]);
    }
    const server = createMcpServer(agent, request.signal);
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      // With JSON responses this resolves once every answer is written, so closing after it is safe.
      return await transport.handleRequest(request, { parsedBody: body });
    } finally {
      await server.close();
    }
  } catch (error) {
    return errorResponse(error, request.headers);
  }
}

/**
 * GET (a server-to-client event stream) and DELETE (end a session): neither exists without
 * sessions, and the transport spec's answer for both is 405; PUT and PATCH are not in the
 * transport at all. Still authenticated first, like every request.
 */
export async function refuseMcpMethod(request: Request): Promise<Response> {
  try {
    await authenticateAgent(request.headers);
  } catch (error) {
    return errorResponse(error, request.headers);
  }
  return Response.json(
    {
      error: {
        code: "method_not_allowed",
        message:
          "This MCP server is stateless: POST JSON-RPC messages; it has no event stream or session.",
      },
    },
    { status: 405, headers: { allow: "POST" } },
  );
}

/** Next.js's own OPTIONS would list the refused methods above as served. */
export function mcpOptions(): Response {
  return new Response(null, { status: 204, headers: { allow: "POST, OPTIONS" } });
}

async function authenticateAgent(headers: Headers): Promise<AgentActor> {
  const actor = await authenticate(getDb(), headers);
  if (actor.kind !== "agent") {
    throw new UnauthenticatedError(
      "The MCP endpoint takes an agent key: send 'Authorization: Bearer cs_agent_…'.",
    );
  }
  return actor;
}

/** The contract's error shape; a 401 also names the scheme (RFC 6750), as HTTP clients expect. */
function errorResponse(error: unknown, headers: Headers): Response {
  const response = toResponse(error);
  if (response.status === 401) {
    const presented = headers.has("authorization");
    response.headers.set(
      "www-authenticate",
      `Bearer realm="countersign"${presented ? ', error="invalid_token"' : ""}`,
    );
  }
  return response;
}
