import { and } from "drizzle-orm";
import { queueMembers } from "@/db/schema";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { managerOf, type QueueCaller } from "./queue-access";
import { anotherAdminRemains, findManagedMember, sameMembership } from "./member-rules";
import type { QueueMemberView } from "./queue-views";

/**
 * A lead or an admin takes someone out of the queue; answers the membership as it was. Allowed on
 * archived queues too: taking away access to a queue's history must always be possible.
 */
export async function removeMember(
  caller: QueueCaller,
  queueId: string,
  userId: string,
): Promise<QueueMemberView> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const { queue, member } = await findManagedMember(tx, manager, queueId, userId);
    const [removed] = await tx
      .delete(queueMembers)
      .where(
        and(
          sameMembership(queue.id, userId, member.role),
          member.role === "admin" ? anotherAdminRemains(queue.id, userId) : undefined,
        ),
      )
      .returning();
    if (!removed) {
      throw new ConflictError(
        "last_admin",
        `${member.name} is the last admin of this installation: make someone else an admin first.`,
        member,
      );
    }
    await appendEvent(tx, {
      type: "member.removed",
      queueId: queue.id,
      actor: manager.eventActor,
      data: { userId, name: member.name, role: member.role },
    });
    return member;
  });
}
