import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { Readable } from "node:stream";
import { lookup as dnsLookup } from "node:dns/promises";
import { InvalidRequestError } from "@/lib/errors";
import {
  allowListHas,
  callbackUrlProblem,
  configuredPlainHttpHosts,
  forbiddenAddress,
  resolveCallbackTarget,
  type CheckedTarget,
  type Lookup,
} from "@/lib/webhooks/callback-target";

// Where a hosted gateway's upstream may be: the webhook targets' rules (lib/webhooks/
// callback-target.ts), with the same operator allow-list (CALLBACK_ALLOWED_HOSTS). An admin
// chooses the URL, but the server connects to it with a credential attached and relays what it
// answers to agents, so without the check a gateway could reach the server's loopback services,
// the private network behind it or a cloud metadata endpoint. Checked when the gateway is saved
// (a clear 400, nothing written) and again when each MCP session connects, after resolving the
// name, and the session's connections go only to the addresses that were checked (pinnedFetch),
// so DNS cannot rebind the name in between.

/** Why the URL is refused (worded for an upstream rather than a webhook), or null. */
export function upstreamUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not a valid URL";
  }
  // The URL is shown to admins and in the audit log: a credential in it would be on display.
  if (url.username || url.password)
    return "must not carry credentials (user:password@): give them as a header, which is stored sealed";
  const secretParameter = [...url.searchParams.keys()].find(credentialLike);
  if (secretParameter !== undefined)
    return `must not carry a credential in its query ('${secretParameter.slice(0, 60)}'): give it as a header, which is stored sealed and never shown`;
  const problem = callbackUrlProblem(raw);
  return problem && reworded(problem);
}

/**
 * Query parameter names that carry credentials: any containing one of these (`access_token`,
 * `x-api-key`, `client_secret`, `X-Amz-Signature` …), or with one of the short words as a part
 * (`key`, `auth`, `sig`, `code` …, so `author` or `oauth_version` pass); parts are split at
 * punctuation and camelCase (`accessKey`, `AWSAccessKeyId`, `api key`, `key[]`).
 */
const CREDENTIAL_PART = /token|secret|passw|apikey|credential|signature|bearer|jwt/;
const CREDENTIAL_WORDS = new Set([
  "key",
  "auth",
  "authorization",
  "sig",
  "code",
  "pwd",
  "pass",
  "session",
  "sessionid",
  "sid",
]);

/** keys written as one lower-case word (`accesskey`, `subscriptionkey`); `monkey` passes */
const KIND_OF_KEY =
  /(access|secret|private|api|app|auth|session|subscription|signing|client|master|account|license)key(id)?$/;

function credentialLike(name: string): boolean {
  // words split at punctuation and camelCase: accessKey, AWSAccessKeyId, api key, key[]
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  return (
    CREDENTIAL_PART.test(words.join("")) ||
    words.some((word) => CREDENTIAL_WORDS.has(word) || KIND_OF_KEY.test(word))
  );
}

/**
 * Why the upstream's headers (its credential) may not go to this URL, or null: over plain http
 * they would cross the network readable by anyone on the path, so they go only to a loopback
 * host, or to one the operator names in MCP_GATEWAY_PLAIN_HTTP_HOSTS. A URL without headers may
 * be plain http.
 */
export function plainHttpCredentialProblem(
  raw: string,
  headerCount: number,
  /** at connect: the addresses the name resolved to (a loopback *name* must resolve to loopback) */
  resolved?: readonly { address: string }[],
): string | null {
  if (headerCount === 0) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null; // upstreamUrlProblem says so
  }
  if (url.protocol !== "http:") return null;
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  const port = url.port ? Number(url.port) : 80;
  const loopback = resolved
    ? resolved.length > 0 &&
      resolved.every(({ address }) => forbiddenAddress(address) === "loopback")
    : host === "localhost" || host.endsWith(".localhost") || forbiddenAddress(host) === "loopback";
  if (loopback || allowListHas(configuredPlainHttpHosts(), host, port)) return null;
  return `headers (the upstream's credential) are sent only over https, or over plain http to a loopback host or one the operator allows in MCP_GATEWAY_PLAIN_HTTP_HOSTS: use an https:// URL`;
}

/** At save: a clear 400 (nothing written) when the headers would go over plain http. */
export function checkPlainHttpCredentials(raw: string, headerCount: number): void {
  const problem = plainHttpCredentialProblem(raw, headerCount);
  if (problem)
    throw new InvalidRequestError(`Invalid request: headers: ${problem}`, [
      { path: "headers", message: problem },
    ]);
}

const reworded = (reason: string) =>
  reason.replace(
    "webhooks go only to public addresses",
    "upstream MCP servers are reached only at public addresses",
  );

export type UpstreamTarget = CheckedTarget | { ok: false; reason: string; permanent: boolean };

/** At connect time: the URL checked again, and every address its name resolves to. */
export async function resolveUpstreamTarget(
  raw: string,
  options: { lookup?: Lookup } = {},
): Promise<UpstreamTarget> {
  const problem = upstreamUrlProblem(raw);
  if (problem) return { ok: false, reason: problem, permanent: true };
  const target = await resolveCallbackTarget(raw, options);
  return target.ok ? target : { ...target, reason: reworded(target.reason) };
}

/** How long saving waits for DNS before leaving the name to the connect-time check. */
const SAVE_LOOKUP_MS = 2000;

/**
 * At save: refuses (400, nothing written) an upstream URL that is refused as written or whose name
 * resolves to an address it may not reach. A name that does not resolve (yet) is accepted: the
 * check when a session connects still applies.
 */
export async function checkUpstreamUrl(raw: string, path = "url"): Promise<void> {
  const lookup: Lookup = (name) =>
    Promise.race([
      dnsLookup(name, { all: true, verbatim: true }),
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error("DNS timed out")), SAVE_LOOKUP_MS).unref(),
      ),
    ]);
  const target = await resolveUpstreamTarget(raw, { lookup });
  if (!target.ok && target.permanent)
    throw new InvalidRequestError(`Invalid request: ${path}: ${target.reason}`, [
      { path, message: target.reason },
    ]);
}

export type PinnedFetch = ((url: string | URL, init?: RequestInit) => Promise<Response>) & {
  /** closes the kept-alive connections */
  close: () => void;
};

/**
 * A fetch for one MCP session's upstream, over node:http(s): fetch would resolve the name again
 * at each connection. Connections go only to the checked addresses (the Host header and TLS keep
 * the name), only to the checked origin, and redirects are never followed (a 3xx is answered as
 * is, and the MCP transport reports it as an error).
 */
export function pinnedFetch(target: CheckedTarget): PinnedFetch {
  const { url: base, address, family, addresses } = target;
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, addresses);
    else callback(null, address, family);
  };
  const https = base.protocol === "https:";
  // Kept alive across the session's requests, and never shared with another origin or session.
  const agent = https
    ? new HttpsAgent({ keepAlive: true, lookup } as ConstructorParameters<typeof HttpsAgent>[0])
    : new HttpAgent({ keepAlive: true, lookup } as ConstructorParameters<typeof HttpAgent>[0]);
  const fetchPinned = (input: string | URL, init: RequestInit = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.origin !== base.origin) {
        reject(new Error(`refused: ${url.origin} is not the gateway's upstream`));
        return;
      }
      const body = init.body;
      if (body != null && typeof body !== "string" && !(body instanceof Uint8Array)) {
        reject(new Error("unsupported request body"));
        return;
      }
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      if (body != null) headers["content-length"] = String(Buffer.byteLength(body));
      const send = https ? httpsRequest : httpRequest;
      const request = send(
        {
          method: init.method ?? "GET",
          protocol: url.protocol,
          hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          headers,
          lookup,
          agent,
          signal: init.signal ?? undefined,
        },
        (response) => resolve(webResponse(response)),
      );
      request.on("error", reject);
      request.end(body ?? undefined);
    });
  return Object.assign(fetchPinned, { close: () => agent.destroy() });
}

function webResponse(response: IncomingMessage): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  const status = response.statusCode ?? 502;
  const empty = status === 204 || status === 304 || status < 200;
  if (empty) response.resume();
  const body = empty
    ? null
    : (Readable.toWeb(response) as unknown as ReadableStream<Uint8Array>).pipeThrough(
        capped(response, headers.get("content-type")?.startsWith("text/event-stream") ?? false),
      );
  return new Response(body, { status: status < 200 ? 502 : status, headers });
}

/** The most an upstream's answer, or one event of its stream, may hold. */
export const MAX_UPSTREAM_MESSAGE_BYTES = 4 * 1024 * 1024;

/**
 * Errors the body (and drops the connection) once an answer, or one event of an event stream,
 * passes MAX_UPSTREAM_MESSAGE_BYTES: the MCP transport buffers each whole before parsing it, so
 * an upstream answering without end would exhaust the shared server's memory. A stream of small
 * events is counted per event (an event ends at a blank line), so a long session is not cut.
 */
function capped(response: IncomingMessage, stream: boolean): TransformStream<Uint8Array> {
  let held = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const lf = stream ? bytes.lastIndexOf("\n\n") : -1;
      const crlf = stream ? bytes.lastIndexOf("\r\n\r\n") : -1;
      const ended = Math.max(lf === -1 ? -1 : lf + 2, crlf === -1 ? -1 : crlf + 4);
      held = ended === -1 ? held + bytes.length : bytes.length - ended;
      if (held > MAX_UPSTREAM_MESSAGE_BYTES) {
        response.destroy();
        controller.error(
          new Error(
            `the upstream's ${stream ? "event" : "answer"} is over ${MAX_UPSTREAM_MESSAGE_BYTES / 1024 / 1024} MiB`,
          ),
        );
        return;
      }
      controller.enqueue(chunk);
    },
  });
}
