import { statement, writeBatch } from "@/db/write-batch";
import { log } from "@/lib/log/logger";

// "Last used" of agent keys and reviewer tokens, kept cheaply: authentication is the hot path
// (~1 ms a request), so it only looks up when this process last wrote the credential's time — a
// Map read — and at most once a minute per credential hands a one-statement write to the write
// queue without waiting for it. The write's own condition keeps several instances from moving the
// time backwards. It is telemetry, not a change of trust: it writes no event.

const WRITE_EVERY_MS = 60_000;
const MAX_ENTRIES = 10_000;

type Kind = "agent_key" | "reviewer_token";

// On globalThis, like the actor cache: one per process whichever copy of lib/ authenticates.
const globalLastUsed = globalThis as unknown as { __countersignLastUsed?: Map<string, number> };
const written = (globalLastUsed.__countersignLastUsed ??= new Map());

const UPDATE: Record<Kind, string> = {
  // by either hash: a rotated key still in its grace period is the same agent being used
  agent_key:
    "update agent_keys set last_used_at = ? where (key_hash = ? or previous_key_hash = ?) and (last_used_at is null or last_used_at < ?)",
  reviewer_token:
    "update reviewer_tokens set last_used_at = ? where token_hash = ? and (last_used_at is null or last_used_at < ?)",
};

/** Notes that a credential (by its hash) was just used; writes it at most once a minute. */
export function noteUse(kind: Kind, credentialHash: string, now = Date.now()): void {
  const last = written.get(credentialHash);
  if (last !== undefined && now - last < WRITE_EVERY_MS) return;
  if (written.size >= MAX_ENTRIES) written.clear();
  written.set(credentialHash, now);
  const args =
    kind === "agent_key"
      ? [now, credentialHash, credentialHash, now - WRITE_EVERY_MS]
      : [now, credentialHash, now - WRITE_EVERY_MS];
  writeBatch([statement(UPDATE[kind], ...args)]).catch((error) => {
    // Not worth failing anything for: the next use a minute on tries again.
    written.delete(credentialHash);
    log().error({ err: error }, "Recording a credential's last use failed");
  });
}
