import { and, eq, isNull, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { queues } from "@/db/schema";
import { changedRow, guard, statement, untilWritten } from "@/db/write-batch";
import { eventRows, type NewEvent } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { ConflictError } from "@/lib/errors";
import {
  findQueueFor,
  managerOf,
  requireAdmin,
  stillAdmin,
  type QueueCaller,
} from "./queue-access";
import { loadQueueDetail, loadQueueView, type QueueDetailView } from "./queue-views";

/**
 * An admin archives a queue: it keeps its history and members but takes no changes. Open queues
 * that escalated to it stop escalating (their batches are then rejected at the deadline) rather
 * than send work to a queue nobody watches; each such change is its own `queue.updated` event.
 * Reads, then one write batch (db/write-batch.ts) that re-checks the queue still open and the
 * queues escalating to it still those read.
 */
export async function archiveQueue(caller: QueueCaller, queueId: string): Promise<QueueDetailView> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const { queue } = await findQueueFor(db, manager, queueId);
    requireAdmin(manager, "archive queues");
    if (queue.archivedAt !== null) {
      throw new ConflictError(
        "queue_archived",
        `Queue '${queue.name}' is already archived.`,
        await loadQueueView(db, manager, queue.id),
      );
    }
    const detached = await db
      .select({ id: queues.id, name: queues.name })
      .from(queues)
      .where(and(eq(queues.escalationQueueId, queue.id), isNull(queues.archivedAt)))
      .orderBy(sql`rowid`);
    const now = Date.now();

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
    await commit([
      ...stillAdmin(manager),
      statement(
        "update queues set archived_at = ? where id = ? and archived_at is null",
        now,
        queue.id,
      ),
      changedRow(),
      // The events name the queues detached: a queue that began or stopped escalating here
      // meanwhile (or was renamed) aborts the batch, and the next attempt reads them again.
      guard(
        "(select group_concat(id || ':' || name, char(10)) from (select id, name from queues where escalation_queue_id = ? and archived_at is null order by rowid)) is ?",
        queue.id,
        detached.length ? detached.map((q) => `${q.id}:${q.name}`).join("\n") : null,
      ),
      statement(
        "update queues set escalation_queue_id = null where escalation_queue_id = ? and archived_at is null",
        queue.id,
      ),
      eventRows(...events),
    ]);
    return loadQueueDetail(db, manager, queue.id);
  });
}
