import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  isInitializeRequest,
  isJSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isLoopback, type GatewayOptions } from "./args.js";
import type { Session } from "./cli.js";

// `--listen HOST:PORT`: MCP clients over streamable HTTP at http://HOST:PORT/mcp. Each client
// session (an initialize without a session id) gets its own upstream, run and relay, exactly as a
// stdio client would; it ends when the client deletes it or the upstream exits.

/** the largest request body read (the MCP message), as Countersign's own default limit */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

type OpenSession = (
  options: GatewayOptions,
  env: NodeJS.ProcessEnv,
  downstream: Transport,
) => Promise<Session>;

export async function listenHttp(
  options: GatewayOptions,
  env: NodeJS.ProcessEnv,
  openSession: OpenSession,
  log: (line: string) => void,
): Promise<number> {
  const { host, port } = options.listen!;
  const sessions = new Map<
    string,
    { transport: StreamableHTTPServerTransport; session: Session }
  >();
  const http = createServer((request, response) => {
    handle(request, response).catch((error: Error) => {
      log(`HTTP request failed: ${error.message}`);
      if (!response.headersSent) jsonError(response, 500, -32603, "Internal error");
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const path = new URL(request.url ?? "/", "http://gateway").pathname;
    if (path !== "/mcp")
      return jsonError(response, 404, -32601, "Not found: the MCP endpoint is /mcp");
    const sessionId = request.headers["mcp-session-id"];
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    let body: unknown;
    if (request.method === "POST") {
      const read = await readBody(request);
      if (read === TOO_LARGE) return jsonError(response, 413, -32600, "Request body too large");
      body = read;
    }
    if (known) {
      // A tools/call whose answer stream closes before the answer: the client stopped listening
      // (it left, or will call again), so a call still waiting leaves its decision unused.
      const asked = toolCallIds(body);
      if (asked.length > 0)
        response.once("close", () => {
          if (!response.writableFinished) for (const id of asked) known.session.abandon(id);
        });
      return known.transport.handleRequest(request, response, body);
    }
    if (sessionId !== undefined)
      return jsonError(response, 404, -32001, "Session not found: initialize again");
    if (request.method !== "POST" || !isInitializeRequest(body))
      return jsonError(response, 400, -32000, "Bad request: no session; send initialize first");

    const actual = (http.address() as { port: number }).port;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, session }),
      // A page in a browser must not reach a loopback gateway by a rebound name.
      ...(isLoopback(host)
        ? {
            enableDnsRebindingProtection: true,
            allowedHosts: [`127.0.0.1:${actual}`, `localhost:${actual}`, `[::1]:${actual}`],
          }
        : {}),
    });
    let session: Session;
    try {
      session = await openSession(options, env, transport);
    } catch (error) {
      return jsonError(
        response,
        502,
        -32603,
        `Could not start the upstream MCP server: ${(error as Error).message}`,
      );
    }
    void session.ended.then(() => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    });
    await transport.handleRequest(request, response, body);
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(port, host, () => resolve());
  });
  const address = http.address() as { address: string; port: number };
  const shown = address.address.includes(":") ? `[${address.address}]` : address.address;
  log(`listening on http://${shown}:${address.port}/mcp`);

  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  http.close();
  const open = [...sessions.values()];
  for (const { session } of open) session.stop();
  await Promise.all(open.map(({ session }) => session.ended));
  http.closeAllConnections();
  return 0;
}

const TOO_LARGE = Symbol("too large");

/** The ids of the tools/call requests in a POSTed body (one message or a batch). */
function toolCallIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.flatMap((message) =>
    isJSONRPCRequest(message) && message.method === "tools/call" ? [message.id] : [],
  );
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return TOO_LARGE;
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text; // the transport answers a parse error
  }
}

function jsonError(response: ServerResponse, status: number, code: number, message: string) {
  response
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
