import type { Actor } from "@/lib/auth/actor";
import { RateLimitedError } from "@/lib/errors";
import { setting } from "@/lib/config/settings";

// Open event streams per caller, counted in this process. Each stream holds a socket and a place
// in the tailer's fan-out for as long as its client keeps it: one leaked key or session opening
// thousands of them would starve everyone else. Counted per agent key and per reviewer (not per
// session: a reviewer can sign in again for a fresh session at will). On globalThis: Next's
// bundle and the production server's each load their own copy of lib/ (lib/http/server.ts).

/** STREAMS_PER_CALLER: how many streams one agent key or one reviewer may hold open at once. */
export function streamsPerCaller(): number {
  return setting("STREAMS_PER_CALLER");
}

const store = globalThis as typeof globalThis & { __countersignStreamSlots?: Map<string, number> };
const open = (store.__countersignStreamSlots ??= new Map<string, number>());

/**
 * Takes one of the caller's stream slots, or throws 429 `rate_limited` when all are in use.
 * Returns the release, safe to call more than once.
 */
export function takeStreamSlot(actor: Actor): () => void {
  const key = `${actor.kind}:${actor.id}`;
  const limit = streamsPerCaller();
  const held = open.get(key) ?? 0;
  if (held >= limit) {
    throw new RateLimitedError(
      5,
      `This ${actor.kind === "agent" ? "agent key" : "reviewer"} already has ${limit} event streams open; close one before opening another.`,
    );
  }
  open.set(key, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (open.get(key) ?? 1) - 1;
    if (left > 0) open.set(key, left);
    else open.delete(key);
  };
}
