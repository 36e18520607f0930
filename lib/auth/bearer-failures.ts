import { RateLimitedError } from "@/lib/errors";

// Guessing agent keys and reviewer tokens. Each unknown `Authorization: Bearer …` counts against
// the client's address; after BEARER_FAILURES_PER_WINDOW (default 30) within
// BEARER_FAILURE_WINDOW_SECS (default 60) of the first, every bearer request from that address is
// answered 429 until the window ends, a valid credential's included. Checking the credential first
// and letting a valid one through would turn the block into an oracle (a 200 among the 429s is a
// hit), so a well-behaved agent behind the same address as a guesser waits out one window; other
// addresses are never slowed. Session cookies are signed (a guess fails the signature before any
// lookup) and sign-in has better-auth's own limit.
//
// The count lives in this process's memory: each app instance counts on its own, and a restart
// forgets. Memory is bounded: at most MAX_CLIENTS addresses are tracked, the oldest dropped first
// (so only someone who can present 10,000 other addresses within a window could flush a block).

const MAX_CLIENTS = 10_000;
const MAX_ADDRESS_LENGTH = 64;

type Entry = { failures: number; windowEndsAt: number };

const globalFailures = globalThis as unknown as {
  __countersignBearerFailures?: Map<string, Entry>;
};
/** address → its failures; a Map iterates in insertion order, so the first key is the oldest */
const failures = (globalFailures.__countersignBearerFailures ??= new Map());

function setting(name: string, fallback: number): number {
  const configured = Number(process.env[name]);
  return Number.isInteger(configured) && configured > 0 ? configured : fallback;
}

/**
 * The client's address: the last X-Forwarded-For entry, which is what the nearest hop saw (a proxy
 * appends the peer it talked to; Next.js sets the header to the socket's address when it is
 * absent). Earlier entries are whatever the client wrote, so they are never used.
 */
export function clientAddress(headers: Headers): string {
  const forwarded = headers.get("x-forwarded-for") ?? "";
  const last = forwarded.slice(forwarded.lastIndexOf(",") + 1).trim();
  return last.slice(0, MAX_ADDRESS_LENGTH).toLowerCase() || "unknown";
}

function liveEntry(address: string, now: number): Entry | undefined {
  const entry = failures.get(address);
  if (entry && entry.windowEndsAt <= now) {
    failures.delete(address);
    return undefined;
  }
  return entry;
}

/** Throws 429 `rate_limited` while `address` is over its limit. */
export function assertNotLimited(address: string, now = Date.now()): void {
  const entry = liveEntry(address, now);
  if (entry && entry.failures >= setting("BEARER_FAILURES_PER_WINDOW", 30)) {
    const retryAfterSecs = Math.max(1, Math.ceil((entry.windowEndsAt - now) / 1000));
    throw new RateLimitedError(
      retryAfterSecs,
      `Too many unknown keys or tokens from this address; try again in ${retryAfterSecs} s.`,
    );
  }
}

/** Counts one unknown credential from `address`. */
export function recordFailure(address: string, now = Date.now()): void {
  const entry = liveEntry(address, now);
  if (entry) {
    entry.failures++;
    return;
  }
  // Every window is as long, so the first key is also the first to expire: drop it for room.
  if (failures.size >= MAX_CLIENTS) failures.delete(failures.keys().next().value!);
  const windowMs = setting("BEARER_FAILURE_WINDOW_SECS", 60) * 1000;
  failures.set(address, { failures: 1, windowEndsAt: now + windowMs });
}
