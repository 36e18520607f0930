import { eq } from "drizzle-orm";
import { savedViews } from "@/db/schema";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { loadViews, type SavedViewResult } from "./view-access";

/** Its creator, or a lead or admin of its queue, deletes a view; answers the view as it was. */
export async function deleteView(caller: QueueCaller, viewId: string): Promise<SavedViewResult> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    // Scoped to the caller's queues: another team's view is 404, like a missing one.
    const [view] = await loadViews(tx, manager, { viewId });
    if (!view) throw new NotFoundError("View");
    if (!view.canDelete)
      throw new ForbiddenError(
        "Only whoever saved this view, or a lead of its queue, can delete it.",
      );
    // The condition in the write: a view deleted meanwhile is a 404, not a second event.
    const [deleted] = await tx.delete(savedViews).where(eq(savedViews.id, viewId)).returning();
    if (!deleted) throw new NotFoundError("View");
    await appendEvent(tx, {
      type: "view.deleted",
      queueId: view.queue.id,
      actor: manager.eventActor,
      data: { viewId, name: view.name },
    });
    return view;
  });
}
