import { and, eq, sql } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { queueMembers, type Queue } from "@/db/schema";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import { findManagedQueue, type Manager } from "./queue-access";
import { loadMember, type QueueMemberView } from "./queue-views";

// What changing or removing a membership must respect, shared by change-role and remove-member.

/** The member to change, in a queue the caller manages; a lead may not touch an admin. */
export async function findManagedMember(
  db: Executor,
  manager: Manager,
  queueId: string,
  userId: string,
): Promise<{ queue: Queue; member: QueueMemberView }> {
  const { queue } = await findManagedQueue(db, manager, queueId);
  const member = await loadMember(db, queue.id, userId);
  if (!member) throw new NotFoundError("Member");
  if (member.role === "admin" && !manager.isAdmin)
    throw new ForbiddenError("Only an admin can change or remove an admin.");
  return { queue, member };
}

/**
 * The condition every write that takes an admin role away carries: some other admin membership
 * remains, so the installation always keeps an admin (checked in the write, not before it).
 */
export function anotherAdminRemains(queueId: string, userId: string) {
  return sql`exists (select 1 from ${queueMembers} as other where other.role = 'admin' and not (other.queue_id = ${queueId} and other.user_id = ${userId}))`;
}

/** The row as loaded: the write changes it only if nobody changed it since. */
export function sameMembership(queueId: string, userId: string, role: QueueMemberView["role"]) {
  return and(
    eq(queueMembers.queueId, queueId),
    eq(queueMembers.userId, userId),
    eq(queueMembers.role, role),
  );
}
