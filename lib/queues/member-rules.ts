import type { InValue } from "@libsql/client";
import { and, eq, isNull, not } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { queueMembers, users, type Queue } from "@/db/schema";
import { ConflictError, ForbiddenError, NotFoundError } from "@/lib/errors";
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

// Another admin who is not deactivated (lib/people/update-person.ts): a deactivated admin cannot
// sign in, so they do not keep the installation managed.
const ANOTHER_ADMIN =
  "exists (select 1 from queue_members as other join \"user\" as u on u.id = other.user_id where other.role = 'admin' and u.deactivated_at is null and not (other.queue_id = ? and other.user_id = ?))";

/**
 * 409 `last_admin` unless taking `member`'s role away leaves the installation an admin. Checked
 * on the read first, for the answer; the write re-checks it (`membershipAsRead`), so two admins
 * stepping down at once cannot both go.
 */
export async function refuseLastAdmin(
  db: Executor,
  queueId: string,
  member: QueueMemberView,
): Promise<void> {
  if (member.role !== "admin") return;
  const [other] = await db
    .select({ userId: queueMembers.userId })
    .from(queueMembers)
    .innerJoin(users, eq(users.id, queueMembers.userId))
    .where(
      and(
        eq(queueMembers.role, "admin"),
        isNull(users.deactivatedAt),
        not(and(eq(queueMembers.queueId, queueId), eq(queueMembers.userId, member.userId))!),
      ),
    )
    .limit(1);
  if (!other) {
    throw new ConflictError(
      "last_admin",
      `${member.name} is the last admin of this installation: make someone else an admin first.`,
      member,
    );
  }
}

/**
 * The condition of a write that changes or removes a membership: the row is as loaded, and when
 * it takes an admin role away some other admin membership remains, so the installation always
 * keeps an admin.
 */
export function membershipAsRead(
  queueId: string,
  member: QueueMemberView,
): { sql: string; args: InValue[] } {
  const same = "queue_id = ? and user_id = ? and role = ?";
  const args: InValue[] = [queueId, member.userId, member.role];
  return member.role === "admin"
    ? { sql: `${same} and ${ANOTHER_ADMIN}`, args: [...args, queueId, member.userId] }
    : { sql: same, args };
}
