import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";

// @modelcontextprotocol/server-everything (the MCP reference server: every feature of the
// protocol) served over streamable HTTP on 127.0.0.1, one server per session, as its own
// streamableHttp transport does, resumable streams included (that one listens on every interface,
// which tests here may not).

type EverythingServer = {
  server: { connect: (transport: StreamableHTTPServerTransport) => Promise<void> };
  cleanup: (sessionId?: string) => void;
};

export type EverythingHost = { url: string; close: () => Promise<void> };

/** `requireHeaders`: answered 401 without them (an upstream with its own API token). */
export async function startEverything(
  options: { requireHeaders?: Record<string, string> } = {},
): Promise<EverythingHost> {
  const { createServer: createEverything } = (await import(
    // @ts-expect-error: the package ships JavaScript without declarations for this deep path
    "@modelcontextprotocol/server-everything/dist/server/index.js"
  )) as { createServer: () => EverythingServer };
  return startMcpHost(createEverything, options);
}

/** Any MCP server (a new one per session, from `create`) hosted the same way. */
export async function startMcpHost(
  create: () => EverythingServer,
  options: { requireHeaders?: Record<string, string> } = {},
): Promise<EverythingHost> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer(async (request, response) => {
    try {
      if (!request.url?.startsWith("/mcp")) {
        response.writeHead(404).end();
        return;
      }
      for (const [name, value] of Object.entries(options.requireHeaders ?? {})) {
        if (request.headers[name.toLowerCase()] !== value) {
          response.writeHead(401, { "content-type": "text/plain" }).end(`missing ${name}`);
          return;
        }
      }
      const sessionId = request.headers["mcp-session-id"];
      let transport = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
      const body = request.method === "POST" ? await readJson(request) : undefined;
      if (!transport) {
        if (request.method !== "POST" || sessionId !== undefined) {
          response.writeHead(404).end();
          return;
        }
        const { server, cleanup } = create();
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          eventStore: new InMemoryEventStore(),
          onsessioninitialized: (id) => void sessions.set(id, created),
        });
        created.onclose = () => {
          if (created.sessionId) sessions.delete(created.sessionId);
          cleanup(created.sessionId);
        };
        await server.connect(created);
        transport = created;
      }
      await transport.handleRequest(request, response, body);
    } catch (error) {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  };
}

/** server-everything's own event store: a client that lost a stream resumes it (Last-Event-ID). */
class InMemoryEventStore {
  private readonly events = new Map<string, { streamId: string; message: JSONRPCMessage }>();
  async storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const eventId = randomUUID();
    this.events.set(eventId, { streamId, message });
    return eventId;
  }
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const entries = [...this.events.entries()];
    const start = entries.findIndex(([id]) => id === lastEventId);
    if (start === -1) return lastEventId;
    let last = lastEventId;
    for (const [eventId, { message }] of entries.slice(start + 1)) {
      await send(eventId, message);
      last = eventId;
    }
    return last;
  }
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? (JSON.parse(text) as unknown) : undefined;
}
