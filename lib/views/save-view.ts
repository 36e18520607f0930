import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { queues, savedViews } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { newId } from "@/lib/ids";
import { managerOf, requireOpen, type QueueCaller } from "@/lib/queues/queue-access";
import { loadViews, memberRole, ViewFilters, type SavedViewResult } from "./view-access";

export const SaveViewInput = z.strictObject({
  queueId: z.string().min(1).max(200),
  name: z.string().trim().min(1).max(60),
  filters: ViewFilters,
});
export type SaveViewInput = z.infer<typeof SaveViewInput>;

/** Any member saves a named filter in their queue; a name already used there is 409 already_exists. */
export async function saveView(caller: QueueCaller, body: unknown): Promise<SavedViewResult> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const input = parseInput(SaveViewInput, body);
    await memberRole(tx, manager, input.queueId);
    const [queue] = await tx.select().from(queues).where(eq(queues.id, input.queueId));
    requireOpen(queue!, null);
    const now = Date.now();
    const [view] = await tx
      .insert(savedViews)
      .values({
        id: newId(),
        queueId: input.queueId,
        name: input.name,
        filters: input.filters,
        createdBy: manager.reviewer!.id,
        createdAt: now,
      })
      .onConflictDoNothing({ target: [savedViews.queueId, savedViews.name] })
      .returning();
    if (!view) {
      const [taken] = await tx
        .select({ id: savedViews.id })
        .from(savedViews)
        .where(and(eq(savedViews.queueId, input.queueId), eq(savedViews.name, input.name)));
      const current = taken ? (await loadViews(tx, manager, { viewId: taken.id }))[0] : null;
      throw new ConflictError(
        "already_exists",
        `A view named '${input.name}' exists in queue '${queue!.name}'.`,
        current ?? null,
      );
    }
    await appendEvent(tx, {
      type: "view.saved",
      queueId: input.queueId,
      actor: manager.eventActor,
      at: now,
      data: { viewId: view.id, name: view.name, filters: input.filters },
    });
    return (await loadViews(tx, manager, { viewId: view.id }))[0]!;
  });
}
