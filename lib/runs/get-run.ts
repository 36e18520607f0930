import { getDb } from "@/db/client";
import { findRunFor } from "@/lib/access/find-for-caller";
import { loadRunView, type RunView } from "@/lib/read-models/batch-run-views";
import { reviewerQueueIds, type Actor } from "@/lib/auth/actor";

/**
 * A run with its batches (never the checkpoint): all of them for its agent; for a reviewer, only
 * those of the reviewer's queues — a run can pause into several queues.
 */
export async function getRun(actor: Actor, runId: string): Promise<RunView> {
  const db = getDb();
  const run = await findRunFor(db, actor, runId);
  const batchQueueIds =
    actor.kind === "reviewer" ? await reviewerQueueIds(db, actor.id) : undefined;
  return (await loadRunView(db, run.id, { withBatches: true, batchQueueIds }))!;
}
