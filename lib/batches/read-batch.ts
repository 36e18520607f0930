import { z } from "zod";
import { getDb } from "@/db/client";
import { findBatchFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { loadBatchView, type BatchView } from "@/lib/read-models/batch-run-views";
import type { Actor } from "@/lib/auth/actor";
import { untilRevoked, type Credential } from "@/lib/auth/credential-watch";
import { UnauthenticatedError } from "@/lib/errors";
import { watchEvents } from "@/lib/events/tailer";
import { onRequestEnd } from "@/lib/shutdown";

export const ReadBatchQuery = z.object({
  /** seconds to hold a pending batch until it settles */
  wait: z.coerce.number().min(0).max(60).default(0),
});
export type ReadBatchQuery = z.infer<typeof ReadBatchQuery>;

/**
 * The batch as it is now. With `wait`, a pending batch is held until an event settles it or the
 * wait ends; it wakes on the event log, so a decision made by another process wakes it too.
 */
export async function readBatch(
  actor: Actor,
  batchId: string,
  query: unknown,
  signal?: AbortSignal,
  credential?: Credential,
): Promise<BatchView> {
  const { wait } = parseInput(ReadBatchQuery, query);
  const db = getDb();
  const batch = await findBatchFor(db, actor, batchId);
  const audience = actor.kind === "agent" ? "agent" : "reviewer";
  if (batch.status !== "pending" || wait === 0)
    return (await loadBatchView(db, batch.id, audience))!;

  const deadline = Date.now() + wait * 1000;
  // Answer early (as still pending) if the client leaves or the server is stopping; with 401 if
  // the credential the wait began with is revoked meanwhile (lib/auth/credential-watch.ts).
  const ending = new AbortController();
  const ended = ending.signal;
  const stopListening = onRequestEnd(signal, () => ending.abort());
  const revocation = credential ? untilRevoked(credential, undefined) : null;
  revocation?.signal.addEventListener("abort", () => ending.abort());
  // Watch before reading, so a settlement between the read and the watch is not missed.
  const watch = await watchEvents(
    (row) => row.batchId === batchId && row.type.startsWith("batch."),
  );
  try {
    for (;;) {
      const view = (await loadBatchView(db, batchId, audience))!;
      const remaining = deadline - Date.now();
      if (revocation?.revoked()) throw new UnauthenticatedError("That key or token was revoked.");
      if (view.status !== "pending" || remaining <= 0 || ended.aborted) return view;
      await watch.next(remaining, ended);
    }
  } finally {
    watch.close();
    stopListening();
    revocation?.stop();
  }
}
