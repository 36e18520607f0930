import { getDb } from "@/db/client";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, stillAdmin, stillManages, type QueueCaller } from "./queue-access";
import { findManagedMember, membershipAsRead, refuseLastAdmin } from "./member-rules";
import type { QueueMemberView } from "./queue-views";

/**
 * A lead or an admin takes someone out of the queue; answers the membership as it was. Allowed on
 * archived queues too: taking away access to a queue's history must always be possible. The
 * delete carries the membership as read and, for an admin, that another admin remains.
 */
export async function removeMember(
  caller: QueueCaller,
  queueId: string,
  userId: string,
): Promise<QueueMemberView> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const { queue, member } = await findManagedMember(db, manager, queueId, userId);
    await refuseLastAdmin(db, queue.id, member);

    const asRead = membershipAsRead(queue.id, member);
    await commit([
      ...(member.role === "admin" ? stillAdmin(manager) : stillManages(manager, queue.id)),
      statement(`delete from queue_members where ${asRead.sql}`, ...asRead.args),
      changedRow(),
      eventRows({
        type: "member.removed",
        queueId: queue.id,
        actor: manager.eventActor,
        data: { userId, name: member.name, role: member.role },
      }),
    ]);
    return member;
  });
}
