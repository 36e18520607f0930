import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CallToolResultSchema,
  ErrorCode,
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  ListToolsResultSchema,
  type CallToolResult,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type RequestId,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { CallCancelled, CANCELLED, type ToolGate } from "./countersign-gate.js";

// The proxy, at the level of JSON-RPC messages: everything passes between the MCP client
// (downstream) and the upstream server unchanged, in both directions and with its own ids —
// initialize, lists and their change notifications, resources, prompts, completion, logging,
// ping, progress, cancellation, and the server's own requests (sampling, elicitation, roots) —
// except `tools/call`, which goes to Countersign first. Relaying messages rather than
// re-declaring the upstream's tools keeps every capability, field and future method intact.

/** Ids of the gateway's own requests to the upstream (its tools/list): no client uses these. */
const OWN_ID_PREFIX = "countersign-gateway-";
/** how often a waiting call's client hears progress (clients reset their timeout on it) */
export const PROGRESS_INTERVAL_MS = 8_000;

type Pending = { resolve: (message: JSONRPCMessage) => void; reject: (error: Error) => void };

type GovernedCall = {
  controller: AbortController;
  /** set once the call went upstream: a cancellation is then the upstream's to handle */
  forwarded: boolean;
};

export type RelayFacts = {
  clientInfo: { name: string; version: string } | null;
  serverInfo: { name: string; version: string } | null;
};

export class Relay {
  readonly facts: RelayFacts;
  /** methods of the client's requests in flight upstream, by id (to read their answers) */
  private readonly clientRequests = new Map<RequestId, string>();
  private readonly governed = new Map<RequestId, GovernedCall>();
  /** answers the gateway waits for from upstream: its own requests and forwarded tools/calls */
  private readonly awaiting = new Map<RequestId, Pending>();
  /**
   * Forwarded calls whose client already heard progress while they waited, by progress token:
   * the upstream's own progress is renumbered above the last waiting value (MCP: progress only
   * grows), `offset` fixed by its first notification.
   */
  private readonly renumbered = new Map<
    string | number,
    { after: number; offset: number | null }
  >();
  private tools: Map<string, Tool> | null = null;
  private ownIds = 0;
  private closing = false;
  private clientGone = false;
  private upstreamGone = false;
  /** resolves when either side closed, with which */
  readonly closed: Promise<"downstream" | "upstream">;
  private onClosed!: (side: "downstream" | "upstream") => void;

  constructor(
    private readonly downstream: Transport,
    private readonly upstream: Transport,
    private readonly gate: ToolGate,
    private readonly options: {
      facts?: RelayFacts;
      upstreamTimeoutMs: number;
      log: (line: string) => void;
    },
  ) {
    this.facts = options.facts ?? { clientInfo: null, serverInfo: null };
    this.closed = new Promise((resolve) => (this.onClosed = resolve));
  }

  async start(): Promise<void> {
    this.upstream.onmessage = (message) => this.fromUpstream(message);
    this.upstream.onerror = (error) => this.options.log(`upstream: ${error.message}`);
    this.upstream.onclose = () => this.upstreamClosed();
    this.downstream.onmessage = (message) => this.fromClient(message);
    this.downstream.onerror = (error) => this.options.log(`client: ${error.message}`);
    this.downstream.onclose = () => this.close("downstream");
    await this.upstream.start();
    await this.downstream.start();
  }

  private close(side: "downstream" | "upstream") {
    if (side === "downstream") this.clientGone = true;
    else this.upstreamGone = true;
    if (this.closing) return;
    this.closing = true;
    // Calls still waiting for a decision stop waiting; their cards stay, unused, for the identical
    // call of a later session to pick up (a restarted gateway loses nothing decided). Calls
    // already upstream finish (or fail) and are reported.
    for (const call of this.governed.values())
      if (!call.forwarded) call.controller.abort("session ended");
    this.onClosed(side);
  }

  /**
   * The client stopped listening for this call's answer without cancelling it (its HTTP stream
   * closed: it left, or its next request went to another instance). A call still waiting for its
   * decision stops waiting and leaves its card unused, for the identical call of the client's
   * next session to pick up, rather than using the decision for an answer nobody reads. A call
   * already forwarded runs on (and is reported). Returns whether the call stopped waiting.
   */
  abandon(id: RequestId): boolean {
    const call = this.governed.get(id);
    if (!call || call.forwarded) return false;
    call.controller.abort("abandoned");
    return true;
  }

  /** Waits (a bounded time) for the calls in flight to answer and report, before exiting. */
  async drain(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.governed.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** `relatedRequestId`: over HTTP, the message goes on that request's stream. */
  private send(to: Transport, message: JSONRPCMessage, relatedRequestId?: RequestId) {
    to.send(message, relatedRequestId === undefined ? undefined : { relatedRequestId }).catch(
      (error: Error) => this.options.log(`send failed: ${error.message}`),
    );
  }

  private fromClient(message: JSONRPCMessage) {
    if (isJSONRPCRequest(message)) {
      if (message.method === "tools/call") {
        void this.toolCall(message);
        return;
      }
      if (message.method === "initialize") {
        const info = (message.params as { clientInfo?: RelayFacts["clientInfo"] }).clientInfo;
        this.facts.clientInfo = info ?? null;
      }
      this.clientRequests.set(message.id, message.method);
    } else if (isJSONRPCNotification(message)) {
      // A request sent without an id (a `tools/call` as a notification) would reach the upstream
      // ungated: only notifications proper pass.
      if (!message.method.startsWith("notifications/")) {
        this.options.log(`dropped a client notification '${message.method.slice(0, 100)}'`);
        return;
      }
      if (message.method === "notifications/cancelled" && message.params) {
        const call = this.governed.get(message.params.requestId as RequestId);
        if (call && !call.forwarded) {
          // Never reached the upstream: withdrawing the card is all there is to cancel.
          call.controller.abort(CANCELLED);
          return;
        }
      }
    }
    this.send(this.upstream, message);
  }

  private fromUpstream(message: JSONRPCMessage) {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const id = message.id as RequestId;
      const waiter = this.awaiting.get(id);
      if (waiter) {
        this.awaiting.delete(id);
        waiter.resolve(message);
        return;
      }
      const method = this.clientRequests.get(id);
      this.clientRequests.delete(id);
      if (isJSONRPCResultResponse(message)) this.read(method, message.result);
    } else if (
      isJSONRPCNotification(message) &&
      message.method === "notifications/tools/list_changed"
    ) {
      this.tools = null;
    } else if (isJSONRPCNotification(message) && message.method === "notifications/progress") {
      message = this.renumber(message);
    }
    this.send(this.downstream, message);
  }

  /**
   * The upstream's progress for a call whose client heard the gateway's own progress while it
   * waited (1, 2, … n): shifted by a fixed offset so its first value lands above n and the rest
   * keep their spacing; `total` moves with it, so progress ≤ total still holds.
   */
  private renumber(message: JSONRPCNotification): JSONRPCNotification {
    const params = message.params as
      { progressToken?: string | number; progress?: unknown; total?: unknown } | undefined;
    const token = params?.progressToken;
    const shift = token === undefined ? undefined : this.renumbered.get(token);
    if (!shift || typeof params!.progress !== "number") return message;
    const progress = params!.progress;
    shift.offset ??= progress > 0 ? shift.after : shift.after + 1 - progress;
    return {
      ...message,
      params: {
        ...params,
        progress: progress + shift.offset,
        ...(typeof params!.total === "number" ? { total: params!.total + shift.offset } : {}),
      },
    };
  }

  /** What the gateway learns from answers passing by: the server's name and protocol, its tools. */
  private read(method: string | undefined, result: Record<string, unknown>) {
    if (method === "initialize") {
      const info = result.serverInfo as RelayFacts["serverInfo"];
      this.facts.serverInfo = info ?? null;
      // HTTP transports send the negotiated version on every later request.
      if (typeof result.protocolVersion === "string")
        this.upstream.setProtocolVersion?.(result.protocolVersion);
    }
  }

  private async toolCall(request: JSONRPCRequest) {
    const params = (request.params ?? {}) as {
      name?: unknown;
      arguments?: unknown;
      _meta?: { progressToken?: string | number };
    };
    const controller = new AbortController();
    const governed: GovernedCall = { controller, forwarded: false };
    this.governed.set(request.id, governed);
    const progress = this.progress(request.id, params._meta?.progressToken);
    try {
      if (typeof params.name !== "string") {
        this.answerError(request.id, ErrorCode.InvalidParams, "tools/call needs a tool name");
        return;
      }
      const args = params.arguments ?? {};
      if (typeof args !== "object" || args === null || Array.isArray(args)) {
        this.answerError(
          request.id,
          ErrorCode.InvalidParams,
          "tools/call arguments must be an object",
        );
        return;
      }
      const toolName = params.name;
      const tool = await this.toolInfo(toolName).catch(() => null);
      const result = await this.gate.call(
        {
          toolName,
          args: args as Record<string, unknown>,
          tool,
          signal: controller.signal,
          progress: params._meta?.progressToken !== undefined,
          onStatus: progress.say,
        },
        (approvedArgs) => {
          progress.stop();
          const token = params._meta?.progressToken;
          if (token !== undefined && progress.sent() > 0)
            this.renumbered.set(token, { after: progress.sent(), offset: null });
          governed.forwarded = true;
          return this.forward(request, approvedArgs);
        },
      );
      this.answer(request.id, result);
    } catch (error) {
      if (error instanceof CallCancelled || (controller.signal.aborted && !governed.forwarded)) {
        if (this.upstreamGone)
          this.answerError(
            request.id,
            ErrorCode.ConnectionClosed,
            "The upstream MCP server exited while this call waited for approval; the request was withdrawn and nothing ran.",
          );
        return;
      }
      const upstreamError = error instanceof UpstreamError ? error : null;
      this.answerError(
        request.id,
        upstreamError?.code ?? ErrorCode.InternalError,
        upstreamError?.message ?? `countersign-mcp-gateway: ${(error as Error).message}`,
        upstreamError?.data,
      );
    } finally {
      progress.stop();
      this.governed.delete(request.id);
      const token = params._meta?.progressToken;
      if (token !== undefined) this.renumbered.delete(token);
    }
  }

  /** Sends the approved call upstream under the client's own id; resolves with its result. */
  private async forward(
    request: JSONRPCRequest,
    args: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const answer = await this.ask(
      { ...request, params: { ...request.params, arguments: args } },
      `tools/call ${String((request.params as { name?: unknown }).name)}`,
    );
    if (isJSONRPCErrorResponse(answer)) {
      throw new UpstreamError(answer.error.code, answer.error.message, answer.error.data);
    }
    const parsed = CallToolResultSchema.safeParse((answer as { result: unknown }).result);
    if (!parsed.success) {
      throw new UpstreamError(
        ErrorCode.InternalError,
        `The upstream MCP server answered tools/call with something that is not a tool result: ${parsed.error.message.slice(0, 300)}`,
      );
    }
    return parsed.data;
  }

  /** One request to the upstream whose answer the gateway reads itself (not passed on). */
  private ask(request: JSONRPCRequest, what: string): Promise<JSONRPCMessage> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.awaiting.delete(request.id);
        this.send(this.upstream, {
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: request.id, reason: "countersign-mcp-gateway: timed out" },
        });
        reject(
          new UpstreamError(
            ErrorCode.RequestTimeout,
            `The upstream MCP server did not answer ${what} within ${this.options.upstreamTimeoutMs / 1000} s.`,
          ),
        );
      }, this.options.upstreamTimeoutMs);
      this.awaiting.set(request.id, {
        resolve: (message) => {
          clearTimeout(timer);
          resolve(message);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.upstream.send(request).catch((error: Error) => {
        this.awaiting.delete(request.id);
        clearTimeout(timer);
        reject(
          new UpstreamError(
            ErrorCode.ConnectionClosed,
            `Could not reach the upstream MCP server: ${error.message}`,
          ),
        );
      });
    });
  }

  /** The upstream's description of a tool (for the card and for checking edits), or null. */
  private async toolInfo(name: string): Promise<Tool | null> {
    if (this.tools?.has(name)) return this.tools.get(name)!;
    const tools = new Map<string, Tool>();
    let cursor: string | undefined;
    // A bounded number of pages: a server that pages forever does not hold the call.
    for (let page = 0; page < 20; page++) {
      const answer = await this.ask(
        {
          jsonrpc: "2.0",
          id: `${OWN_ID_PREFIX}${++this.ownIds}`,
          method: "tools/list",
          params: cursor ? { cursor } : {},
        },
        "tools/list",
      );
      if (!isJSONRPCResultResponse(answer)) break;
      const parsed = ListToolsResultSchema.safeParse(answer.result);
      if (!parsed.success) break;
      for (const tool of parsed.data.tools) tools.set(tool.name, tool);
      cursor = parsed.data.nextCursor;
      if (!cursor) break;
    }
    this.tools = tools;
    return tools.get(name) ?? null;
  }

  /** Progress for a waiting call, when its client sent a token: the latest status, repeated. */
  private progress(requestId: RequestId, token: string | number | undefined) {
    let timer: ReturnType<typeof setInterval> | undefined;
    let count = 0;
    let message = "";
    const tick = () => {
      if (token === undefined || this.clientGone) return;
      this.send(
        this.downstream,
        {
          jsonrpc: "2.0",
          method: "notifications/progress",
          params: { progressToken: token, progress: ++count, message },
        },
        requestId,
      );
    };
    return {
      say: (status: string) => {
        if (token === undefined || status === message) return;
        message = status;
        tick();
        clearInterval(timer);
        timer = setInterval(tick, PROGRESS_INTERVAL_MS);
      },
      stop: () => {
        clearInterval(timer);
        token = undefined;
      },
      /** the last progress value sent (0: none) */
      sent: () => count,
    };
  }

  private answer(id: RequestId, result: CallToolResult) {
    if (this.clientGone) return;
    this.send(this.downstream, { jsonrpc: "2.0", id, result });
  }

  private answerError(id: RequestId, code: number, message: string, data?: unknown) {
    if (this.clientGone) return;
    this.send(this.downstream, {
      jsonrpc: "2.0",
      id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    });
  }

  /** The upstream went away: every call waiting on it fails with a clear error, then we stop. */
  private upstreamClosed() {
    const gone = () =>
      new UpstreamError(
        ErrorCode.ConnectionClosed,
        "The upstream MCP server exited or closed the connection.",
      );
    for (const waiter of this.awaiting.values()) waiter.reject(gone());
    this.awaiting.clear();
    for (const id of this.clientRequests.keys()) {
      this.answerError(id, ErrorCode.ConnectionClosed, gone().message);
    }
    this.clientRequests.clear();
    this.close("upstream");
  }
}

/** An error to hand the MCP client as the upstream gave it (or as the gateway saw it fail). */
export class UpstreamError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}
