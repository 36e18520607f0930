import { and, gt, gte, like } from "drizzle-orm";
import { getDb } from "@/db/client";
import { rateLimitCounts } from "@/db/schema";
import { RateLimitedError } from "@/lib/errors";
import { rateLimitSubject } from "./client-address";
import { countAttempt } from "./rate-limit-counts";
import { setting } from "@/lib/config/settings";

// Guessing agent keys and reviewer tokens. Each unknown `Authorization: Bearer …` counts against
// the client's address (lib/auth/client-address.ts: the socket's, or what a TRUSTED_PROXIES proxy
// reports; an IPv6 client by its /64); after BEARER_FAILURES_PER_WINDOW (default 30) within
// BEARER_FAILURE_WINDOW_SECS (default 60) of the first, every bearer request from that address is
// answered 429 until the window ends, a valid credential's included. Checking the credential first
// and letting a valid one through would turn the block into an oracle (a 200 among the 429s is a
// hit), so a well-behaved agent behind the same address as a guesser waits out one window; other
// addresses are never slowed. Session cookies are signed (a guess fails the signature before any
// lookup) and sign-in has better-auth's own limit (lib/auth/better-auth.ts), counted the same way.
//
// The counts live in the database (lib/auth/rate-limit-counts.ts), shared by every instance. A
// failure is one write; a request is checked against this process's copy of the blocked
// addresses, read again from the database at most once a second, so a successful request costs no
// query (as the actor cache promises) and a block made on another instance reaches this one within
// a second, or at once on this instance's next failure from that address. The copy holds at most
// MAX_BLOCKED addresses (only someone presenting that many addresses, each guessing up to the
// limit, within one window could push one out).

const MAX_BLOCKED = 10_000;
const REFRESH_MS = 1000;
const SCOPE = "bearer:";

type Blocked = { addresses: Map<string, number>; readAt: number; reading?: Promise<void> };

const globalBlocked = globalThis as unknown as { __countersignBearerBlocked?: Blocked };
/** address → when its block ends, as last read (or counted by this process) */
const blocked: Blocked = (globalBlocked.__countersignBearerBlocked ??= {
  addresses: new Map(),
  readAt: 0,
});

const failureLimit = () => setting("BEARER_FAILURES_PER_WINDOW");

/** Reads the addresses blocked now; concurrent callers share one read. */
function refreshBlocked(now: number): Promise<void> {
  blocked.reading ??= (async () => {
    try {
      const rows = await getDb()
        .select({ key: rateLimitCounts.key, windowEndsAt: rateLimitCounts.windowEndsAt })
        .from(rateLimitCounts)
        .where(
          and(
            like(rateLimitCounts.key, `${SCOPE}%`),
            gte(rateLimitCounts.count, failureLimit()),
            gt(rateLimitCounts.windowEndsAt, now),
          ),
        )
        .limit(MAX_BLOCKED);
      blocked.addresses = new Map(
        rows.map((row) => [row.key.slice(SCOPE.length), row.windowEndsAt]),
      );
      blocked.readAt = now;
    } finally {
      blocked.reading = undefined;
    }
  })();
  return blocked.reading;
}

/** Throws 429 `rate_limited` while `address` is over its limit. */
export async function assertNotLimited(address: string, now = Date.now()): Promise<void> {
  if (now - blocked.readAt >= REFRESH_MS) await refreshBlocked(now);
  const endsAt = blocked.addresses.get(rateLimitSubject(address));
  if (endsAt !== undefined && endsAt > now) {
    const retryAfterSecs = Math.max(1, Math.ceil((endsAt - now) / 1000));
    throw new RateLimitedError(
      retryAfterSecs,
      `Too many unknown keys or tokens from this address; try again in ${retryAfterSecs} s.`,
    );
  }
}

/** Counts one unknown credential from `address` (for every instance). */
export async function recordFailure(address: string, now = Date.now()): Promise<void> {
  const subject = rateLimitSubject(address);
  const windowSecs = setting("BEARER_FAILURE_WINDOW_SECS");
  const { count, windowEndsAt } = await countAttempt(SCOPE + subject, windowSecs, now);
  if (count >= failureLimit() && blocked.addresses.size < MAX_BLOCKED) {
    blocked.addresses.set(subject, windowEndsAt);
  }
}
