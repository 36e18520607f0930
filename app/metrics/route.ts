import { createHash, timingSafeEqual } from "node:crypto";
import { assertNotLimited, recordFailure } from "@/lib/auth/bearer-failures";
import { setting } from "@/lib/config/settings";
import { RateLimitedError } from "@/lib/errors";
import { clientAddress } from "@/lib/auth/client-address";
import { metrics } from "@/lib/metrics/metrics";

export const dynamic = "force-dynamic";

// Prometheus's scrape target (README, "Metrics"). Outside /api/v1: it is for the operator's
// monitoring, not part of the agent API. It answers only a scraper that sends
// `Authorization: Bearer <METRICS_TOKEN>`; with no METRICS_TOKEN set the endpoint is off and
// answers 404, so an installation that never configured monitoring exposes nothing new.
//
// A wrong token counts as a bearer guess from the client's address (lib/auth/bearer-failures.ts,
// the same count as unknown agent keys and reviewer tokens): past BEARER_FAILURES_PER_WINDOW the
// address is answered 429 until the window ends, the right token included (so the block confirms
// no guess). The token itself is at least 32 characters (lib/config/settings.ts refuses to start
// with a shorter one).

/** METRICS_TOKEN: the bearer token a scraper must send; unset or empty turns /metrics off. */
function metricsToken(): string | null {
  return setting("METRICS_TOKEN") || null;
}

const plain = (status: number, text: string, headers: Record<string, string> = {}) =>
  new Response(`${text}\n`, {
    status,
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-store",
      ...headers,
    },
  });

/** Compared as SHA-256 digests in constant time: the answer's timing says nothing of the token. */
function sameToken(sent: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(sent), digest(expected));
}

export async function GET(request: Request) {
  const expected = metricsToken();
  if (!expected) return plain(404, "Not found: metrics are off (set METRICS_TOKEN to serve them).");
  const address = clientAddress(request.headers);
  try {
    await assertNotLimited(address);
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    return plain(429, error.message, {
      "retry-after": String(error.retryAfterSecs),
    });
  }
  const sent = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "")?.[1];
  if (!sent || !sameToken(sent, expected)) {
    // a token sent and wrong is a guess; no token at all is a misconfigured scraper, not counted
    if (sent) await recordFailure(address);
    return plain(401, "Unauthorized: send Authorization: Bearer <METRICS_TOKEN>.", {
      "www-authenticate": 'Bearer realm="metrics"',
    });
  }
  const { registry } = metrics();
  return new Response(await registry.metrics(), {
    headers: { "content-type": registry.contentType, "cache-control": "no-store" },
  });
}
