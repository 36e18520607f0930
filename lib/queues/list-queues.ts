import { getDb } from "@/db/client";
import { queues } from "@/db/schema";
import { reviewerQueueIds } from "@/lib/auth/actor";
import { managerOf, type QueueCaller } from "./queue-access";
import { loadQueueViews, type QueueView } from "./queue-views";

/** The caller's queues with their role and settings; an installation admin sees every queue. */
export async function listQueues(
  caller: QueueCaller,
): Promise<{ queues: QueueView[]; canCreateQueues: boolean }> {
  const db = getDb();
  const manager = await managerOf(db, caller);
  const queueIds = manager.isAdmin
    ? (await db.select({ id: queues.id }).from(queues)).map((q) => q.id)
    : await reviewerQueueIds(db, manager.reviewer!.id);
  return {
    queues: await loadQueueViews(db, manager, queueIds),
    canCreateQueues: manager.isAdmin,
  };
}
