import type { IncomingMessage, ServerResponse } from "node:http";
import { NotFoundError, toResponse } from "@/lib/errors";
import { matchRoute, type HttpMethod, type RouteMatch, type RouteModule } from "./api-routes";
import { API_CONTENT_SECURITY_POLICY } from "./content-security-policy";
import { bodyText } from "@/lib/json-response";
import { readBodyFrom } from "./read-body";
import { log } from "@/lib/log/logger";

// The API route handlers called straight from Node's http server (lib/http/server.ts), with what
// Next.js does around them re-done here, and only that: the headers next.config.ts gives /api/,
// proxy.ts's 404 for a path that does not decode, and Next's HEAD and OPTIONS for routes that do
// not serve them. Anything Next.js would redirect or treat specially (a trailing slash,
// repeated slashes, backslashes, dot segments, an unusual method) is left to Next.js, so it is
// answered exactly as before.

/** What Next.js (next.config.ts `headers`) puts on every API answer. */
export const API_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": API_CONTENT_SECURITY_POLICY,
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
};

const METHODS = new Set<string>(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A path under /api/ whose percent-escapes do not decode: no such endpoint or id can exist. */
const UNDECODABLE = "undecodable";

export type ApiDispatch = RouteMatch | typeof UNDECODABLE;

/** The route that answers this request (or the 404 for an undecodable path), or null for Next.js. */
export function matchApiRequest(request: IncomingMessage): ApiDispatch | null {
  const url = request.url;
  if (!url?.startsWith("/api/") || !METHODS.has(request.method!)) return null;
  const end = url.indexOf("?");
  const pathname = end === -1 ? url : url.slice(0, end);
  // Next.js answers these with a 308 to the path's normal form.
  if (pathname.endsWith("/") || pathname.includes("//") || pathname.includes("\\")) return null;
  const raw = pathname.slice(1).split("/");
  let decoded = raw;
  if (pathname.includes("%")) {
    try {
      decoded = raw.map(decodeURIComponent);
    } catch {
      return UNDECODABLE;
    }
  }
  if (decoded.some((segment) => segment === "." || segment === "..")) return null;
  return matchRoute(raw, decoded);
}

/** Serves a request `matchApiRequest` matched: the route's handler, its answer written back. */
export async function serveApiRequest(
  request: IncomingMessage,
  response: ServerResponse,
  dispatch: ApiDispatch,
): Promise<void> {
  // The handlers' request.signal: long-polls stop when their client goes away. Only a GET waits
  // for anything (long-polls, exports): a write is answered as soon as its batch commits, and
  // none reads the signal. A signal given to a web Request costs about 0.1 ms of CPU (undici
  // follows it through a weak reference), a tenth of a whole write, so writes go without one.
  let signal: AbortSignal | undefined;
  if (request.method === "GET" || request.method === "HEAD") {
    const aborted = new AbortController();
    response.once("close", () => {
      if (!response.writableFinished) aborted.abort();
    });
    signal = aborted.signal;
  }
  let answer: Response;
  try {
    if (dispatch === UNDECODABLE) {
      answer = toResponse(new NotFoundError("Endpoint"));
    } else {
      const handler = handlerFor(dispatch.module, request.method as HttpMethod);
      answer = await handler(webRequest(request, signal), {
        params: Promise.resolve(dispatch.params),
      });
    }
  } catch (error) {
    answer = toResponse(error);
  }
  await writeResponse(request, response, answer);
}

type Handler = (
  request: Request,
  context: { params: Promise<Record<string, string>> },
) => Response | Promise<Response>;

/**
 * The route's handler for `method`, completed as Next.js completes it: HEAD by GET, OPTIONS
 * by a 204 listing what the file exports, anything else by a bare 405.
 */
export function handlerFor(module: RouteModule, method: HttpMethod): Handler {
  const own = module[method];
  if (own) return own;
  if (method === "HEAD" && module.GET) return module.GET;
  if (method === "OPTIONS") {
    const implemented = [...METHODS].filter((m) => module[m as HttpMethod]);
    if (module.GET && !module.HEAD) implemented.push("HEAD");
    const allow = [...new Set([...implemented, "OPTIONS"])].sort().join(", ");
    return () => new Response(null, { status: 204, headers: { allow } });
  }
  return () => new Response(null, { status: 405 });
}

/** Only a plain host names the request's URL; anything else could not be parsed. */
const PLAIN_HOST = /^[\w.-]+(:\d+)?$|^\[[\da-f:.]+\](:\d+)?$/i;

/**
 * The request as the web Request a route handler takes. Its body stays in Node's request, read
 * only by lib/http/read-body.ts (the one reader of an API body) and only when the handler reads
 * it; a body nobody reads is left to Node, which discards it once the answer is sent and keeps
 * the connection.
 */
function webRequest(request: IncomingMessage, signal: AbortSignal | undefined): Request {
  const host = request.headers.host;
  const origin = `http://${host && PLAIN_HOST.test(host) ? host : "localhost"}`;
  const method = request.method!;
  const answer = new Request(origin + request.url, {
    method,
    headers: webHeaders(request),
    signal,
  });
  if (method !== "GET" && method !== "HEAD") readBodyFrom(answer, request);
  return answer;
}

/**
 * The request's headers as web Headers (the client's address among them, as lib/http/server.ts
 * stamped it: lib/auth/client-address.ts).
 */
export function webHeaders(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return headers;
}

/** Writes a web Response to a ServerResponse: status, the API headers and its own, its body as it streams. */
export async function writeResponse(
  request: IncomingMessage,
  response: ServerResponse,
  answer: Response,
): Promise<void> {
  if (response.headersSent || response.destroyed) {
    void answer.body?.cancel().catch(() => undefined);
    if (!response.destroyed) response.destroy();
    return;
  }
  const headers: Record<string, string | string[]> = { ...API_HEADERS };
  answer.headers.forEach((value, name) => {
    // Each Set-Cookie stays its own header line; every other header is one value.
    if (name === "set-cookie") headers[name] = [...((headers[name] as string[]) ?? []), value];
    else headers[name] = value;
  });
  const text = bodyText(answer);
  if (text !== undefined) {
    // the whole answer is at hand: one write, with its length (lib/json-response.ts)
    headers["content-length"] = String(Buffer.byteLength(text));
    response.writeHead(answer.status, headers);
    response.end(request.method === "HEAD" ? undefined : text);
    return;
  }
  response.writeHead(answer.status, headers);
  if (!answer.body || request.method === "HEAD") {
    void answer.body?.cancel().catch(() => undefined);
    response.end();
    return;
  }
  await pipeBody(answer.body, response);
}

async function pipeBody(body: ReadableStream<Uint8Array>, response: ServerResponse): Promise<void> {
  const reader = body.getReader();
  // A client that leaves stops the body (a stream's work ends with it).
  const stop = () => void reader.cancel().catch(() => undefined);
  response.once("close", stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!response.write(value)) await drained(response);
    }
    response.end();
  } catch (error) {
    log().error({ err: error }, "Writing an API answer failed");
    response.destroy();
  } finally {
    response.off("close", stop);
  }
}

function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off("drain", done);
      response.off("close", done);
      resolve();
    };
    response.on("drain", done);
    response.on("close", done);
  });
}
