import { and, eq, isNull } from "drizzle-orm";
import { queues } from "@/db/schema";
import { appendEvents, type NewEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { ConflictError } from "@/lib/errors";
import { findQueueFor, managerOf, requireAdmin, type QueueCaller } from "./queue-access";
import { loadQueueDetail, loadQueueView, type QueueDetailView } from "./queue-views";

/**
 * An admin archives a queue: it keeps its history and members but takes no changes. Open queues
 * that escalated to it stop escalating (their batches are then rejected at the deadline) rather
 * than send work to a queue nobody watches; each such change is its own `queue.updated` event.
 */
export async function archiveQueue(caller: QueueCaller, queueId: string): Promise<QueueDetailView> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const { queue } = await findQueueFor(tx, manager, queueId);
    requireAdmin(manager, "archive queues");
    const now = Date.now();
    const [archived] = await tx
      .update(queues)
      .set({ archivedAt: now })
      .where(and(eq(queues.id, queue.id), isNull(queues.archivedAt)))
      .returning({ id: queues.id });
    if (!archived) {
      throw new ConflictError(
        "queue_archived",
        `Queue '${queue.name}' is already archived.`,
        await loadQueueView(tx, manager, queue.id),
      );
    }
    const detached = await tx
      .update(queues)
      .set({ escalationQueueId: null })
      .where(and(eq(queues.escalationQueueId, queue.id), isNull(queues.archivedAt)))
      .returning({ id: queues.id, name: queues.name });

    const events: NewEvent[] = [
      {
        type: "queue.archived",
        queueId: queue.id,
        actor: manager.eventActor,
        at: now,
        data: { name: queue.name, escalationRemovedFrom: detached.map((q) => q.id) },
      },
      ...detached.map((other) => ({
        type: "queue.updated",
        queueId: other.id,
        actor: manager.eventActor,
        at: now,
        data: {
          name: other.name,
          changes: { escalationQueueId: { before: queue.id, after: null } },
          reason: `escalation queue '${queue.name}' was archived`,
        },
      })),
    ];
    await appendEvents(tx, events);
    return loadQueueDetail(tx, manager, queue.id);
  });
}
