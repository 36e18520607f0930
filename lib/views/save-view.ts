import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { queues, savedViews, type SavedView } from "@/db/schema";
import { changedRow, guard, insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { managerOf, requireOpen, stillOpen, type QueueCaller } from "@/lib/queues/queue-access";
import {
  loadViews,
  memberRole,
  toResource,
  ViewFilters,
  type SavedViewResult,
} from "./view-access";
import { SingleLineText } from "@/lib/text/stored-text";

export const SaveViewInput = z.strictObject({
  queueId: SingleLineText.min(1).max(200),
  name: SingleLineText.trim().min(1).max(60),
  filters: ViewFilters,
});
export type SaveViewInput = z.infer<typeof SaveViewInput>;

/**
 * Any member saves a named filter in their queue; a name already used there is 409 already_exists.
 * Reads, then one write batch (db/write-batch.ts): a view of that name saved meanwhile aborts it,
 * and the next attempt answers the 409 with that view.
 */
export async function saveView(caller: QueueCaller, body: unknown): Promise<SavedViewResult> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const input = parseInput(SaveViewInput, body);
    await memberRole(db, manager, input.queueId);
    const [queue] = await db.select().from(queues).where(eq(queues.id, input.queueId));
    requireOpen(queue!, null);
    const [taken] = await db
      .select({ id: savedViews.id })
      .from(savedViews)
      .where(and(eq(savedViews.queueId, input.queueId), eq(savedViews.name, input.name)));
    if (taken) {
      const current = (await loadViews(db, manager, { viewId: taken.id }))[0];
      throw new ConflictError(
        "already_exists",
        `A view named '${input.name}' exists in queue '${queue!.name}'.`,
        current ?? null,
      );
    }
    const reviewer = manager.reviewer!;
    const view: SavedView = {
      id: newId(),
      queueId: input.queueId,
      name: input.name,
      filters: input.filters,
      createdBy: reviewer.id,
      createdAt: Date.now(),
    };
    await commit([
      // Still a member of the queue, and the queue still open.
      guard(
        "exists (select 1 from queue_members where queue_id = ? and user_id = ?)",
        view.queueId,
        reviewer.id,
      ),
      stillOpen(view.queueId),
      insertRows(savedViews, [view], " on conflict (queue_id, name) do nothing"),
      changedRow(),
      eventRows({
        type: "view.saved",
        queueId: view.queueId,
        actor: manager.eventActor,
        at: view.createdAt,
        data: { viewId: view.id, name: view.name, filters: input.filters },
      }),
    ]);
    // Whoever saved a view may delete it.
    return toResource(view, queue!.name, reviewer.name, true);
  });
}
