import type { Actor } from "./actor";

// Who an agent key or reviewer token belongs to, remembered for a second so that a busy agent's
// requests do not each read agent_keys (or reviewer_tokens and users) again. A second is how long
// a change made by another process (a key revoked by the operator's CLI or straight in the
// database, a mode switched by another instance) may go unseen here. Changes this app makes
// itself call `forgetCachedActors` once committed, so they apply to the very next request.
//
// Only successful lookups are kept: an unknown credential is looked up (and counted by
// bearer-failures.ts) every time. Keys are the credentials' SHA-256 hashes, never the secrets.
// One cache per process, on globalThis: the production server and Next's bundle each load their
// own copy of lib/ (lib/http/server.ts).

const TTL_MS = 1000;
const MAX_ENTRIES = 10_000;

type Entry = { actor: Actor; expiresAt: number };
type ActorCache = {
  /** credential hash → actor; a Map iterates in insertion order, so the first key is the oldest */
  entries: Map<string, Entry>;
  /** grows at every forget, so a lookup that began before a change cannot store what it read */
  generation: number;
};

const globalCache = globalThis as unknown as { __countersignActorCache?: ActorCache };
const cache = (globalCache.__countersignActorCache ??= { entries: new Map(), generation: 0 });

/** The actor remembered for this credential hash, if it was looked up less than TTL_MS ago. */
export function cachedActor(credentialHash: string, now = Date.now()): Actor | null {
  const entry = cache.entries.get(credentialHash);
  if (!entry) return null;
  if (entry.expiresAt > now) return entry.actor;
  cache.entries.delete(credentialHash);
  return null;
}

/** Where a lookup starts: pass it to `rememberActor` with what the lookup found. */
export function cacheGeneration(): number {
  return cache.generation;
}

/**
 * Remembers what a lookup found, unless the cache was cleared since it began (it may have read
 * the row as it was before the change). The actor is frozen: every request shares it.
 */
export function rememberActor(
  credentialHash: string,
  actor: Actor,
  lookupGeneration: number,
  now = Date.now(),
): void {
  if (lookupGeneration !== cache.generation) return;
  if (actor.kind === "agent") Object.freeze(actor.queueIds);
  cache.entries.delete(credentialHash);
  // Every entry lives as long, so the oldest is also the first to expire: drop it for room.
  if (cache.entries.size >= MAX_ENTRIES) cache.entries.delete(cache.entries.keys().next().value!);
  cache.entries.set(credentialHash, { actor: Object.freeze(actor), expiresAt: now + TTL_MS });
}

/**
 * Forgets every remembered actor. Called after a committed change to what an actor holds (an
 * agent's mode, a user's name); such changes are rare, so forgetting all is simpler than one.
 */
export function forgetCachedActors(): void {
  cache.entries.clear();
  cache.generation++;
}
