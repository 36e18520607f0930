import { getDb } from "@/db/client";
import { changedRow, guard, statement, untilWritten } from "@/db/write-batch";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, stillManages, type QueueCaller } from "@/lib/queues/queue-access";
import { loadViews, type SavedViewResult } from "./view-access";

/**
 * Its creator, or a lead or admin of its queue, deletes a view; answers the view as it was.
 * Reads, then one write batch (db/write-batch.ts) that re-checks the caller's right to delete it.
 */
export async function deleteView(caller: QueueCaller, viewId: string): Promise<SavedViewResult> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    // Scoped to the caller's queues: another team's view is 404, like a missing one.
    const [view] = await loadViews(db, manager, { viewId });
    if (!view) throw new NotFoundError("View");
    if (!view.canDelete)
      throw new ForbiddenError(
        "Only whoever saved this view, or a lead of its queue, can delete it.",
      );
    const reviewer = manager.reviewer!;
    await commit([
      // Still a member of its queue (views are found through membership) and, unless they saved
      // it, still its lead or an admin.
      guard(
        "exists (select 1 from queue_members where queue_id = ? and user_id = ?)",
        view.queue.id,
        reviewer.id,
      ),
      ...(view.createdBy.id === reviewer.id ? [] : stillManages(manager, view.queue.id)),
      // A view deleted meanwhile aborts the batch: the next attempt answers 404, not a second event.
      statement("delete from saved_views where id = ?", viewId),
      changedRow(),
      eventRows({
        type: "view.deleted",
        queueId: view.queue.id,
        actor: manager.eventActor,
        data: { viewId, name: view.name },
      }),
    ]);
    return view;
  });
}
