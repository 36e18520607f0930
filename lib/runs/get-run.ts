import { getDb } from "@/db/client";
import { findRunFor } from "@/lib/api/access";
import { loadRunView, type RunView } from "@/lib/api/views";
import type { Actor } from "@/lib/auth/actor";

/** A run with its batches, for its agent or for reviewers of its queues (never the checkpoint). */
export async function getRun(actor: Actor, runId: string): Promise<RunView> {
  const db = getDb();
  const run = await findRunFor(db, actor, runId);
  return (await loadRunView(db, run.id, { withBatches: true }))!;
}
