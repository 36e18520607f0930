import { getClient } from "@/db/client";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// Open streams and long-polls outlive the one authentication their request made. Each registers
// the credential it was opened with here, and one timer per process re-checks every distinct
// credential held open — whatever the number of streams, one read batch of three statements every
// CHECK_MS — and ends those whose key was revoked, rotated past its grace period, or whose session
// was signed out or deleted. Polling the rows (not reacting to events) also catches a revocation
// made by another instance, by the admin CLI, or by a hand edit of the database, and better-auth's
// own sign-out, which writes no event. A change made in this process calls `recheckCredentials`,
// so its own streams end at once.

/** What a request authenticated with: a credential hash, or a better-auth session's id. */
export type Credential =
  | { kind: "agent_key"; hash: string }
  | { kind: "reviewer_token"; hash: string }
  | { kind: "session"; id: string };

type Watch = { credential: Credential; onRevoked: () => void };
type Watcher = {
  watches: Set<Watch>;
  timer: ReturnType<typeof setInterval> | null;
  running: Promise<void> | null;
  /** a recheck asked for while a check ran: that check may have read before the change */
  again: boolean;
};

/** How often open streams' credentials are re-checked (a revoked one ends within about this). */
function checkMs(): number {
  return setting("CREDENTIAL_CHECK_MS");
}

// On globalThis: the production server and Next's bundle each load their own copy of lib/, and a
// revocation made through either must reach the streams of both (lib/http/server.ts).
const globalWatcher = globalThis as unknown as { __countersignCredentialWatch?: Watcher };
const watcher = (globalWatcher.__countersignCredentialWatch ??= {
  watches: new Set(),
  timer: null,
  running: null,
  again: false,
});

/** Calls `onRevoked` once, when `credential` stops being valid; returns the function that stops watching. */
export function watchCredential(credential: Credential, onRevoked: () => void): () => void {
  const watch: Watch = { credential, onRevoked };
  watcher.watches.add(watch);
  if (!watcher.timer) {
    watcher.timer = setInterval(() => void recheckCredentials(), checkMs());
    watcher.timer.unref();
  }
  return () => unwatch(watch);
}

function unwatch(watch: Watch): void {
  watcher.watches.delete(watch);
  if (watcher.watches.size === 0 && watcher.timer) {
    clearInterval(watcher.timer);
    watcher.timer = null;
  }
}

/** Re-checks every watched credential now (after this process revoked or signed out something). */
export async function recheckCredentials(): Promise<void> {
  if (watcher.running) {
    watcher.again = true;
    return watcher.running;
  }
  watcher.running = (async () => {
    try {
      do {
        watcher.again = false;
        await checkOnce();
      } while (watcher.again);
    } catch (error) {
      // A database that cannot answer now ends nothing: the next tick checks again.
      log().error({ err: error }, "Re-checking open streams' credentials failed");
    } finally {
      watcher.running = null;
    }
  })();
  return watcher.running;
}

const keyOf = (c: Credential) => `${c.kind}:${c.kind === "session" ? c.id : c.hash}`;

async function checkOnce(): Promise<void> {
  const watches = [...watcher.watches];
  if (watches.length === 0) return;
  const wanted = {
    agent_key: new Set<string>(),
    reviewer_token: new Set<string>(),
    session: new Set<string>(),
  };
  for (const { credential: c } of watches) wanted[c.kind].add(c.kind === "session" ? c.id : c.hash);
  const list = (kind: keyof typeof wanted) => JSON.stringify([...wanted[kind]]);
  const now = Date.now();
  // Lists go in as JSON (json_each), so the statements' text never varies.
  const [agents, tokens, sessions] = await getClient().batch(
    [
      {
        sql: `select key_hash from agent_keys where revoked_at is null and key_hash in (select value from json_each(?))
              union all
              select previous_key_hash from agent_keys where revoked_at is null and previous_key_expires_at > ?
                and previous_key_hash in (select value from json_each(?))`,
        args: [list("agent_key"), now, list("agent_key")],
      },
      {
        sql: "select token_hash from reviewer_tokens where revoked_at is null and token_hash in (select value from json_each(?))",
        args: [list("reviewer_token")],
      },
      {
        sql: "select id from session where expires_at > ? and id in (select value from json_each(?))",
        args: [now, list("session")],
      },
    ],
    "deferred",
  );
  const live = new Set<string>([
    ...agents!.rows.map((r) => `agent_key:${String(r[0])}`),
    ...tokens!.rows.map((r) => `reviewer_token:${String(r[0])}`),
    ...sessions!.rows.map((r) => `session:${String(r[0])}`),
  ]);
  for (const watch of watches) {
    if (live.has(keyOf(watch.credential)) || !watcher.watches.has(watch)) continue;
    unwatch(watch);
    watch.onRevoked();
  }
}

/**
 * A signal that aborts when `signal` does or when `credential` is revoked, and whether the
 * latter happened: for long-polls, which answer 401 once their credential is gone.
 */
export function untilRevoked(
  credential: Credential,
  signal: AbortSignal | undefined,
): { signal: AbortSignal; revoked: () => boolean; stop: () => void } {
  const controller = new AbortController();
  let revoked = false;
  const stopWatching = watchCredential(credential, () => {
    revoked = true;
    controller.abort();
  });
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort);
  if (signal?.aborted) controller.abort();
  return {
    signal: controller.signal,
    revoked: () => revoked,
    stop: () => {
      stopWatching();
      signal?.removeEventListener("abort", onAbort);
    },
  };
}
