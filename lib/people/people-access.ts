import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { queueMembers, users, type User } from "@/db/schema";
import { guard, type Statement } from "@/db/write-batch";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import { managerOf, type Manager, type QueueCaller } from "@/lib/queues/queue-access";

// Who may manage whom. Admins manage everyone. A lead sees the members of the queues they lead,
// invites people into those queues (as reviewer or lead, never admin), and may send a password
// reset to someone whose every membership is in a queue they lead and who is no admin: a lead
// must not be able to take over an account that holds powers beyond the lead's own. Renaming,
// deactivating, reactivating and creating with a password are the admins'.

export type PeopleManager = Manager & {
  /** the queues the caller leads; every queue for an admin (null) */
  ledQueueIds: string[] | null;
};

/** 403 unless the caller is an admin or leads a queue. */
export async function peopleManagerOf(db: Executor, caller: QueueCaller): Promise<PeopleManager> {
  const manager = await managerOf(db, caller);
  if (manager.isAdmin || !manager.reviewer) return { ...manager, ledQueueIds: null };
  const led = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, manager.reviewer.id), eq(queueMembers.role, "lead")));
  if (led.length === 0) throw new ForbiddenError("Only admins and queue leads can manage people.");
  return { ...manager, ledQueueIds: led.map((r) => r.queueId) };
}

export type Membership = { queueId: string; role: "reviewer" | "lead" | "admin" };

/** The person, if the caller may see them (a lead: members of their queues); else 404. */
export async function findPersonFor(
  db: Executor,
  manager: PeopleManager,
  userId: string,
): Promise<{ user: User; memberships: Membership[] }> {
  const [user] = await db.select().from(users).where(eq(users.id, userId));
  if (!user) throw new NotFoundError("Person");
  const memberships = await db
    .select({ queueId: queueMembers.queueId, role: queueMembers.role })
    .from(queueMembers)
    .where(eq(queueMembers.userId, userId));
  const led = manager.ledQueueIds;
  if (led && !memberships.some((m) => led.includes(m.queueId))) throw new NotFoundError("Person");
  return { user, memberships };
}

/** A lead may reset only someone all of whose memberships they lead, and who is no admin. */
export function requireResettable(manager: PeopleManager, memberships: Membership[]): void {
  const led = manager.ledQueueIds;
  if (!led) return;
  if (memberships.some((m) => m.role === "admin" || !led.includes(m.queueId)))
    throw new ForbiddenError(
      "Only an admin can reset the password of someone with powers outside the queues you lead.",
    );
}

/** The memberships a lead may hand out: in queues they lead, as reviewer or lead. */
export function requireGrantable(manager: PeopleManager, memberships: Membership[]): void {
  const led = manager.ledQueueIds;
  if (!led) return;
  for (const m of memberships) {
    if (!led.includes(m.queueId))
      throw new ForbiddenError("A lead can invite people only into the queues they lead.");
    if (m.role === "admin") throw new ForbiddenError("Only an admin can grant the admin role.");
  }
}

/**
 * The write's re-check of the caller's powers (read before it, outside the write lock): still an
 * admin, or still a lead of `queueIds`.
 */
export function stillManagesPeople(manager: PeopleManager, queueIds: string[]): Statement[] {
  const reviewer = manager.reviewer;
  if (!reviewer) return [];
  if (manager.ledQueueIds === null)
    return [
      guard(
        "exists (select 1 from queue_members where user_id = ? and role = 'admin')",
        reviewer.id,
      ),
    ];
  return [...new Set(queueIds)].map((queueId) =>
    guard(
      "exists (select 1 from queue_members where user_id = ? and queue_id = ? and role in ('lead', 'admin'))",
      reviewer.id,
      queueId,
    ),
  );
}

/** The members of `queueIds`, for a lead's list. */
export async function memberIdsOf(db: Executor, queueIds: string[]): Promise<string[]> {
  if (queueIds.length === 0) return [];
  const rows = await db
    .selectDistinct({ userId: queueMembers.userId })
    .from(queueMembers)
    .where(inArray(queueMembers.queueId, queueIds));
  return rows.map((r) => r.userId);
}
