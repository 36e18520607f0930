import { z } from "zod";
import { getDb } from "@/db/client";
import { findBatchFor } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import type { Actor } from "@/lib/auth/actor";
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
): Promise<BatchView> {
  const { wait } = parseInput(ReadBatchQuery, query);
  const db = getDb();
  const batch = await findBatchFor(db, actor, batchId);
  const audience = actor.kind === "agent" ? "agent" : "reviewer";
  if (batch.status !== "pending" || wait === 0)
    return (await loadBatchView(db, batch.id, audience))!;

  const deadline = Date.now() + wait * 1000;
  // Answer early (as still pending) if the client leaves or the server is stopping.
  const ending = new AbortController();
  const ended = ending.signal;
  const stopListening = onRequestEnd(signal, () => ending.abort());
  // Watch before reading, so a settlement between the read and the watch is not missed.
  const watch = await watchEvents(
    (row) => row.batchId === batchId && row.type.startsWith("batch."),
  );
  try {
    for (;;) {
      const view = (await loadBatchView(db, batchId, audience))!;
      const remaining = deadline - Date.now();
      if (view.status !== "pending" || remaining <= 0 || ended.aborted) return view;
      await watch.next(remaining, ended);
    }
  } finally {
    watch.close();
    stopListening();
  }
}
