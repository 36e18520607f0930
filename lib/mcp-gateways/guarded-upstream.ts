import type {
  Transport,
  TransportSendOptions,
} from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
} from "@modelcontextprotocol/sdk/types.js";

// The upstream side of a hosted gateway session, wrapped so its credential cannot reach the agent.
// The headers' values travel only in the HTTP requests to the upstream; but an upstream that
// answers an error may echo them (a 401 body that quotes the Authorization it refused), and the
// MCP transport puts that body in its error, which the relay would pass to the client. Every
// error and message from the upstream is scrubbed of the values here. And a request the upstream
// cannot be sent (refused, unreachable) is answered as a JSON-RPC error of that request, so the
// client hears why at once rather than waiting for its timeout.

export const REDACTED = "[redacted]";

/** The values to scrub: each header value, and the token after a scheme (`Bearer …`). */
export function secretsOf(headers: Record<string, string>): string[] {
  const secrets = new Set<string>();
  for (const value of Object.values(headers)) {
    if (value.length >= 4) secrets.add(value);
    for (const part of value.split(/\s+/)) if (part.length >= 8) secrets.add(part);
  }
  // longest first, so a value is scrubbed whole before its parts
  return [...secrets].sort((a, b) => b.length - a.length);
}

export function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(REDACTED);
  return out;
}

export class GuardedUpstream implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onerror?: (error: Error) => void;
  onclose?: () => void;

  /** the secrets as they appear inside JSON strings (quotes and backslashes escaped) */
  private readonly jsonSecrets: string[];

  constructor(
    private readonly inner: Transport,
    private readonly secrets: string[],
  ) {
    this.jsonSecrets = secrets.map((secret) => JSON.stringify(secret).slice(1, -1));
  }

  get sessionId() {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string) {
    this.inner.setProtocolVersion?.(version);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message) => this.onmessage?.(this.scrub(message));
    this.inner.onerror = (error) => this.onerror?.(new Error(this.text(error.message)));
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    try {
      await this.inner.send(message, options);
    } catch (error) {
      const why = this.text(error instanceof Error ? error.message : String(error));
      if (!isJSONRPCRequest(message)) throw new Error(why);
      this.onmessage?.({
        jsonrpc: "2.0",
        id: message.id,
        error: {
          code: ErrorCode.ConnectionClosed,
          message: `Could not reach the upstream MCP server: ${why}`,
        },
      });
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private text(value: string): string {
    return redact(value, this.secrets);
  }

  private scrub(message: JSONRPCMessage): JSONRPCMessage {
    if (this.secrets.length === 0) return message;
    const text = JSON.stringify(message);
    const scrubbed = redact(text, this.jsonSecrets);
    return scrubbed === text ? message : (JSON.parse(scrubbed) as JSONRPCMessage);
  }
}
