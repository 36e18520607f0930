import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { requestLineLog, withRequestId } from "./logger";

// One log line per request when its answer is done (lib/http/server.ts calls this for every
// request): method, path, status, duration and the request id. The id is the client's own
// X-Request-Id when it is a sane one (a proxy or an agent that already tags its requests keeps
// its id end to end), else a new one; either way it is echoed in the answer's X-Request-Id.

const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Pages whose last path segment is a secret token (emailed links). */
const TOKEN_PAGES = /^\/(card-link|invite|reset-password)\/[^/]+/;

/**
 * The path as it is safe to log: no query string (it may carry tokens: `?token=`, `?lastEventId=`
 * is harmless but `?code=` is not), no token segment, and no segment long enough to be one.
 */
export function loggablePath(url: string | undefined): string {
  const path = (url ?? "/").split(/[?#]/, 1)[0]!;
  return path
    .replace(TOKEN_PAGES, "/$1/:token")
    .split("/")
    .map((segment) => (segment.length > 64 ? ":redacted" : segment))
    .join("/");
}

export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && SANE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Serves `request` through `serve` with its id attached to every line logged meanwhile. */
export function serveLogged(
  request: IncomingMessage,
  response: ServerResponse,
  serve: () => void,
): void {
  const startedAt = performance.now();
  const requestId = requestIdOf(request);
  request.headers["x-request-id"] = requestId;
  response.setHeader("x-request-id", requestId);
  response.once("close", () => {
    const path = loggablePath(request.url);
    const status = response.statusCode;
    const fields = {
      requestId,
      method: request.method,
      path,
      status,
      durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
      // a stream or a long-poll the client left before its answer was complete
      ...(response.writableFinished ? {} : { aborted: true }),
    };
    const message = `${request.method} ${path} ${status}`;
    const log = requestLineLog();
    if (status >= 500) log.error(fields, message);
    // Pages, assets and health probes (every few seconds from a proxy) only at debug.
    else if (path.startsWith("/api/") && path !== "/api/health") log.info(fields, message);
    else log.debug(fields, message);
  });
  withRequestId(requestId, serve);
}
