import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import {
  isInitializeRequest,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResponse,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, mcpGatewayAgents, mcpGateways, type McpGateway } from "@/db/schema";
import { authenticate, type AgentActor } from "@/lib/auth/actor";
import {
  ApiError,
  InvalidRequestError,
  NotFoundError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
} from "@/lib/errors";
import { CLIENT_ADDRESS_HEADER } from "@/lib/auth/client-address";
import { readJsonBody } from "@/lib/http/read-body";
import { log } from "@/lib/log/logger";
import type * as GatewayPackage from "@/lib/mcp-gateway/index";
import type { RelayFacts } from "@/lib/mcp-gateway/index";
import { openHeaders } from "./gateway-record";
import { GuardedUpstream, redact, secretsOf } from "./guarded-upstream";
import { OWN_API_BASE, ownApiFetch } from "./own-api-fetch";
import { pinnedFetch, plainHttpCredentialProblem, resolveUpstreamTarget } from "./upstream-target";

// The hosted gateways' MCP sessions (streamable HTTP at /api/mcp/gateways/{name}). An agent
// presents its agent key as Bearer; an initialize opens a session: a relay (the
// countersign-mcp-gateway package's Relay and CountersignGate, exactly as the bin runs them) between
// the agent and a fresh connection to the upstream with the gateway's sealed headers, every
// tools/call put to Countersign as that agent key's call. Later requests carry the session's
// Mcp-Session-Id and must come from the same agent key.
//
// A session is connection state, like an open event stream, and lives in this process's memory.
// With several instances behind a load balancer, a request for a session this instance does not
// hold (another's, or one of an instance that died or restarted) is answered 404, which is what
// MCP's streamable HTTP transport prescribes for a session the server no longer knows: the client
// initializes again, on whichever instance it reaches. Chosen over rebuilding the session here
// from the database because what a session holds cannot move between processes anyway: the
// answer to a call in flight goes out on the HTTP stream of the request that asked it, which is
// open to the instance that holds the session; so does the upstream's stream of its own messages
// and any sampling or elicitation it is waiting for; and the upstream's own session may be bound
// to that connection. Re-creating them elsewhere would add a table and a lazy reconnect, and
// still lose exactly those. What must not be lost is in the database already: runs, cards and
// decisions. So:
// - the identical call after the new initialize picks up the earlier call's card (the gate's
//   pick-up: same agent key, same gateway, same tool and arguments; decided → answered from the
//   decision, once; still pending → it waits on that card, no second one);
// - a call whose client stopped listening (its request's stream closed: the client left, or
//   moved to another instance) stops waiting at once and leaves its decision unused (Relay's
//   `abandon`), so this instance does not use a decision for an answer nobody reads while the
//   client's identical call waits elsewhere; a call already forwarded runs on and is reported.
//   One race is left: a client that leaves while its decision is being taken into use (the
//   `/use` request in flight) — that call is forwarded and reported, its answer read by no one,
//   and the identical call elsewhere gets a new card (nothing used twice, nothing lost).
// Routing by the Mcp-Session-Id header keeps sessions whole (and saves the re-initialize), but
// correctness does not depend on it (test/mcp-gateways/instances.test.ts: two servers, one
// database).
//
// Every request re-reads the gateway: a disabled gateway, an agent no longer allowed or an edited
// gateway (its revision moved) ends the session at its next request (404: initialize again), so
// an edit's new URL or headers are used from then on. A tools/call that waited for a person is
// checked the same way just before it is forwarded (refused if the gateway changed meanwhile),
// disabling or editing a gateway in this process ends its sessions at once, and the sweeper
// re-checks every session each minute (other instances' edits, revoked keys). Sessions end on
// DELETE, when the upstream closes, and after IDLE_MS without a request from the agent (messages
// the upstream sends on its own do not count; a governed call in flight does).

const IDLE_MS = 15 * 60_000;
const SWEEP_MS = 60_000;
/** sessions one agent key may hold open at once (each holds an upstream connection) */
const MAX_SESSIONS_PER_AGENT = 32;
/** how long a forwarded call may take upstream, as the bin's default --upstream-timeout */
const UPSTREAM_TIMEOUT_MS = 600_000;

type HostedSession = {
  gatewayId: string;
  gatewayName: string;
  gatewayRevision: number;
  agentId: string;
  transport: WebStandardStreamableHTTPServerTransport;
  /** the agent's last request, or the last answer to one */
  lastSeen: number;
  /** the agent's tools/call requests not answered yet (a call waiting for a person is not idle) */
  inFlight: Set<RequestId>;
  /** ends the session (as a DELETE would) and resolves once its run was closed */
  end: () => Promise<void>;
  /** its client stopped listening for this call's answer (Relay.abandon) */
  abandon: (id: RequestId) => void;
};

// One table per process (lib/http/server.ts loads lib/ twice: its own copy and Next.js's).
const registry: Registry = ((
  globalThis as { __countersignMcpGatewaySessions?: Registry }
).__countersignMcpGatewaySessions ??= { sessions: new Map(), sweeper: null });
type Registry = {
  sessions: Map<string, HostedSession>;
  sweeper: ReturnType<typeof setInterval> | null;
  /** per agent key, sessions being opened (counted against the cap before the first await) */
  opening?: Map<string, number>;
};
const opening = (registry.opening ??= new Map());

function startSweeper() {
  if (registry.sweeper) return;
  registry.sweeper = setInterval(
    () => void Promise.all([endIdleSessions(), endStaleSessions()]).catch(() => {}),
    SWEEP_MS,
  );
  registry.sweeper.unref();
}

/** Ends the sessions with no request from their agent for IDLE_MS by `now` and no call in flight. */
export async function endIdleSessions(now = Date.now()): Promise<number> {
  const idle = [...registry.sessions.values()].filter(
    (s) => s.inFlight.size === 0 && now - s.lastSeen > IDLE_MS,
  );
  await Promise.all(idle.map((session) => session.end()));
  return idle.length;
}

/** Ends the sessions whose gateway is disabled or changed, or whose key is off it or revoked. */
export async function endStaleSessions(): Promise<number> {
  const sessions = [...registry.sessions.values()];
  const stale = (
    await Promise.all(sessions.map(async (s) => ((await stillServed(s)) === null ? null : s)))
  ).filter((s) => s !== null);
  await Promise.all(stale.map((session) => session.end()));
  return stale.length;
}

/** Ends this process's sessions on a gateway that it no longer serves (disabled or edited here). */
export async function endGatewaySessions(gatewayId: string): Promise<void> {
  const sessions = [...registry.sessions.values()].filter((s) => s.gatewayId === gatewayId);
  await Promise.all(
    sessions.map(async (s) => {
      if ((await stillServed(s)) !== null) await s.end();
    }),
  ).catch((error: unknown) => log().warn({ err: error }, "Hosted sessions could not be ended"));
}

/** Why the session may no longer reach its upstream, or null while it may. */
async function stillServed(
  session: Pick<HostedSession, "gatewayId" | "gatewayRevision" | "agentId">,
): Promise<string | null> {
  const [row] = await getDb()
    .select({
      status: mcpGateways.status,
      revision: mcpGateways.revision,
      allowed: mcpGatewayAgents.agentKeyId,
      live: agentKeys.id,
    })
    .from(mcpGateways)
    .leftJoin(
      mcpGatewayAgents,
      and(
        eq(mcpGatewayAgents.gatewayId, mcpGateways.id),
        eq(mcpGatewayAgents.agentKeyId, session.agentId),
      ),
    )
    .leftJoin(
      agentKeys,
      and(eq(agentKeys.id, mcpGatewayAgents.agentKeyId), isNull(agentKeys.revokedAt)),
    )
    .where(eq(mcpGateways.id, session.gatewayId));
  if (!row || row.status !== "enabled") return "the gateway was disabled";
  if (row.revision !== session.gatewayRevision) return "the gateway was changed";
  if (row.allowed === null || row.live === null) return "this agent key is no longer allowed";
  return null;
}

// The countersign-mcp-gateway package, loaded by its name: its build (lib/mcp-gateway/dist, made by
// `npm run build` before the app's) through its exports, as any program using it would. Not
// imported statically: Next.js's bundler does not resolve the `.js` specifiers the package's
// TypeScript sources use (its types are read from the sources above).
const GATEWAY_PACKAGE = "@countersign/mcp-gateway";
let gatewayPackage: Promise<typeof GatewayPackage> | undefined;
const loadGatewayPackage = () =>
  (gatewayPackage ??= (
    import(/* webpackIgnore: true */ /* turbopackIgnore: true */ GATEWAY_PACKAGE) as Promise<
      typeof GatewayPackage
    >
  ).catch((error: unknown) => {
    gatewayPackage = undefined;
    log().error({ err: error }, "The countersign-mcp-gateway package could not be loaded");
    throw new UnavailableError(
      "Hosted MCP gateways are not available on this server: its countersign-mcp-gateway package is not built (npm run build).",
      60,
    );
  }));

/** How many hosted sessions are open in this process (tests and /metrics-style checks). */
export const openHostedSessions = () => registry.sessions.size;

/** Serves one request to /api/mcp/gateways/{name}: 401 → 404 → 403 → the MCP transport. */
export async function serveGatewayRequest(request: Request, name: string): Promise<Response> {
  const body = request.method === "POST" ? await readJsonBody(request) : undefined;
  const db = getDb();
  const actor = await authenticate(db, request.headers);
  if (actor.kind !== "agent")
    throw new UnauthenticatedError(
      "A hosted MCP gateway takes an agent key: send 'Authorization: Bearer cs_agent_…'.",
    );
  const sessionId = request.headers.get("mcp-session-id");
  let gateway: McpGateway;
  try {
    gateway = await gatewayFor(name, actor);
  } catch (error) {
    // Disabled, or this key taken off it: the key's session there ends now, not when idle.
    const open = sessionId === null ? undefined : registry.sessions.get(sessionId);
    if (open?.agentId === actor.id && open.gatewayName === name) await open.end();
    throw error;
  }

  if (sessionId !== null) {
    const session = registry.sessions.get(sessionId);
    if (!session || session.agentId !== actor.id || session.gatewayId !== gateway.id)
      throw sessionGone("This MCP session ended (or is another key's): initialize again.");
    if (session.gatewayRevision !== gateway.revision) {
      await session.end();
      throw sessionGone("The gateway was changed since this MCP session began: initialize again.");
    }
    session.lastSeen = Date.now();
    const answer = await session.transport.handleRequest(request, { parsedBody: body });
    // A tools/call whose answer stream the client stops reading before its end (it closed the
    // connection): nobody is listening for it any more.
    const asked = toolCallIds(body);
    if (asked.length === 0) return answer;
    return whenUnread(answer, () => {
      for (const id of asked) if (session.inFlight.has(id)) session.abandon(id);
    });
  }
  if (request.method !== "POST" || !isInitializeRequest(body))
    throw new InvalidRequestError(
      "Start an MCP session first: POST an initialize request (without Mcp-Session-Id).",
      [{ path: "(body)", message: "expected an initialize request" }],
    );
  // Counted and reserved before the first await, so racing initializes cannot pass the cap.
  const held =
    [...registry.sessions.values()].filter((s) => s.agentId === actor.id).length +
    (opening.get(actor.id) ?? 0);
  if (held >= MAX_SESSIONS_PER_AGENT)
    throw new RateLimitedError(
      60,
      `This agent key holds ${held} open sessions on hosted MCP gateways; end some (DELETE) or wait for them to go idle.`,
    );
  opening.set(actor.id, (opening.get(actor.id) ?? 0) + 1);
  try {
    const transport = await openSession(
      gateway,
      actor,
      request,
      (body as unknown as { id: RequestId }).id,
    );
    return await transport.handleRequest(request, { parsedBody: body });
  } finally {
    const left = (opening.get(actor.id) ?? 1) - 1;
    if (left > 0) opening.set(actor.id, left);
    else opening.delete(actor.id);
  }
}

/** The answer, with `unread` called when its reader cancels its body before the end. */
function whenUnread(answer: Response, unread: () => void): Response {
  if (!answer.body) return answer;
  const reader = answer.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      unread();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/** The ids of the tools/call requests in a POSTed body (one message or a batch). */
function toolCallIds(body: unknown): RequestId[] {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.flatMap((message) =>
    isJSONRPCRequest(message) && message.method === "tools/call" ? [message.id] : [],
  );
}

/** 404 is what MCP clients take as "the session is gone, initialize again". */
const sessionGone = (message: string) => new ApiError("not_found", 404, message);

async function gatewayFor(name: string, actor: AgentActor): Promise<McpGateway> {
  const [row] = await getDb()
    .select({ gateway: mcpGateways, allowed: mcpGatewayAgents.agentKeyId })
    .from(mcpGateways)
    .leftJoin(
      mcpGatewayAgents,
      and(
        eq(mcpGatewayAgents.gatewayId, mcpGateways.id),
        eq(mcpGatewayAgents.agentKeyId, actor.id),
      ),
    )
    .where(eq(mcpGateways.name, name));
  // A key not allowed on it is answered as for an unknown gateway: a 403 would confirm the name.
  if (!row || row.gateway.status !== "enabled" || row.allowed === null)
    throw new NotFoundError(
      `MCP gateway '${name}' (unknown, disabled, or not open to agent key '${actor.name}')`,
    );
  return row.gateway;
}

/** Connects a new session: the upstream checked (SSRF) and pinned, the relay started. */
async function openSession(
  gateway: McpGateway,
  actor: AgentActor,
  request: Request,
  initializeId: RequestId,
): Promise<WebStandardStreamableHTTPServerTransport> {
  // Checked again now, after resolving the name: it may point elsewhere than when it was saved.
  const target = await resolveUpstreamTarget(gateway.url);
  if (!target.ok)
    throw new UnavailableError(
      `The upstream of MCP gateway '${gateway.name}' cannot be reached: ${target.reason}`,
      target.permanent ? 60 : 5,
    );
  const headers = openHeaders(gateway);
  // Saved before the rule (or the operator's list changed since): the credential stays home.
  const plain = plainHttpCredentialProblem(
    gateway.url,
    Object.keys(headers).length,
    target.addresses,
  );
  if (plain)
    throw new UnavailableError(
      `The upstream of MCP gateway '${gateway.name}' cannot be reached: ${plain}`,
      60,
    );
  const secrets = secretsOf(headers);
  const fetchUpstream = pinnedFetch(target);
  const connection = new StreamableHTTPClientTransport(new URL(gateway.url), {
    requestInit: { headers },
    fetch: fetchUpstream,
  });
  // A tools/call is forwarded after its decision, perhaps much later: checked again just before
  // (refused, it is answered as an error of that call; the session ends at its next request).
  const forward = connection.send.bind(connection);
  connection.send = async (message, options) => {
    if (isJSONRPCRequest(message) && message.method === "tools/call") {
      const why = await stillServed(session);
      if (why !== null) throw new Error(`not forwarded: ${why} while the call waited`);
    }
    return forward(message, options);
  };
  const upstream = new GuardedUpstream(connection, secrets);
  const say = (line: string) =>
    log().warn({ gateway: gateway.name, agentId: actor.id }, redact(line, secrets));

  const agentKey = request.headers
    .get("authorization")!
    .replace(/^Bearer\s+/i, "")
    .trim();
  const { CountersignGate, Relay } = await loadGatewayPackage();
  const facts: RelayFacts = { clientInfo: null, serverInfo: null };
  const gate = new CountersignGate(
    {
      baseUrl: OWN_API_BASE,
      apiKey: agentKey,
      fetch: ownApiFetch(request.headers.get(CLIENT_ADDRESS_HEADER), {
        id: gateway.id,
        name: gateway.name,
      }),
    },
    () => ({
      // the gateway's name is the server's name on cards and in policies (`name.tool`)
      server: gateway.name,
      serverVersion: facts.serverInfo?.version ?? null,
      client: facts.clientInfo?.name ?? null,
      clientVersion: facts.clientInfo?.version ?? null,
      upstreamTransport: "http",
    }),
    { queue: null, timeoutSecs: null, answerWithinMs: null },
  );

  // (`session`, below, is in place before the transport handles its first request)
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      registry.sessions.set(id, session);
      startSweeper();
    },
  });
  // An answer to the agent's request counts as activity; what the upstream sends on its own
  // (log lines, resource updates) does not, or an abandoned session would never go idle.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (isJSONRPCResponse(message) || isJSONRPCErrorResponse(message)) {
      session.lastSeen = Date.now();
      if (message.id !== undefined) session.inFlight.delete(message.id);
    }
    // An initialize the upstream refused leaves nothing to keep: the session ends once answered.
    if (isJSONRPCErrorResponse(message) && message.id === initializeId)
      setTimeout(() => void session.end(), 1_000).unref();
    return send(message, options);
  };
  const relay = new Relay(transport, upstream, gate, {
    facts,
    upstreamTimeoutMs: UPSTREAM_TIMEOUT_MS,
    log: say,
  });
  const ended = (async () => {
    const side = await relay.closed;
    await relay.drain();
    await gate.close(side === "upstream" ? { failed: "The upstream MCP server closed." } : {});
    await upstream.close().catch(() => {});
    await transport.close().catch(() => {});
    fetchUpstream.close();
    if (transport.sessionId) registry.sessions.delete(transport.sessionId);
  })();
  const session: HostedSession = {
    gatewayId: gateway.id,
    gatewayName: gateway.name,
    gatewayRevision: gateway.revision,
    agentId: actor.id,
    transport,
    lastSeen: Date.now(),
    inFlight: new Set(),
    end: async () => {
      await transport.close().catch(() => {});
      await ended;
    },
    abandon: (id) => {
      if (relay.abandon(id)) session.inFlight.delete(id);
    },
  };
  await relay.start();
  // the agent's governed calls, counted until answered (set after the relay's own handler)
  const received = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && message.method === "tools/call")
      session.inFlight.add(message.id);
    // a cancelled request is never answered
    if (isJSONRPCNotification(message) && message.method === "notifications/cancelled") {
      const cancelled = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (cancelled !== undefined) session.inFlight.delete(cancelled);
    }
    received?.(message, extra);
  };
  return transport;
}
