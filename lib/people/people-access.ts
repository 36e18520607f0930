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

/** Whether the caller may see `userId` (an admin: anyone; a lead: members of their queues). */
export async function sees(db: Executor, manager: PeopleManager, userId: string): Promise<boolean> {
  const led = manager.ledQueueIds;
  if (!led) return true;
  if (led.length === 0) return false;
  const [row] = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, userId), inArray(queueMembers.queueId, led)))
    .limit(1);
  return row !== undefined;
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
  // Someone in none of the lead's queues would be an account the lead holds and no longer sees.
  if (memberships.length === 0)
    throw new ForbiddenError("A lead invites people into at least one of the queues they lead.");
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

/**
 * Whether the person who issued a link may still give access to `userId` now: the link is used
 * later, and meanwhile the person may have become an admin, or the issuer lost their powers. An
 * issuer that is an active admin always may; an active lead only while every membership of the
 * person is in a queue they lead, none is admin, and there is at least one.
 */
export async function issuerStillMay(
  db: Executor,
  issuerId: string,
  userId: string,
): Promise<boolean> {
  const [issuer] = await db.select().from(users).where(eq(users.id, issuerId));
  if (!issuer || issuer.deactivatedAt !== null) return false;
  const issuerRoles = await db
    .select({ queueId: queueMembers.queueId, role: queueMembers.role })
    .from(queueMembers)
    .where(eq(queueMembers.userId, issuerId));
  if (issuerRoles.some((m) => m.role === "admin")) return true;
  const led = issuerRoles.filter((m) => m.role === "lead").map((m) => m.queueId);
  const memberships = await db
    .select({ queueId: queueMembers.queueId, role: queueMembers.role })
    .from(queueMembers)
    .where(eq(queueMembers.userId, userId));
  return (
    memberships.length > 0 &&
    memberships.every((m) => m.role !== "admin" && led.includes(m.queueId))
  );
}

/**
 * The same, in SQL, for the write that uses the link (it aborts if anything above moved since the
 * read): issuer active, and an admin or a lead of every queue of the person, who is no admin.
 */
export function issuerStillMayGuard(issuerId: string, userId: string): Statement {
  return guard(
    `exists (select 1 from "user" where id = ? and deactivated_at is null) and (
       exists (select 1 from queue_members where user_id = ? and role = 'admin')
       or (exists (select 1 from queue_members where user_id = ?)
           and not exists (
             select 1 from queue_members t where t.user_id = ? and (t.role = 'admin' or not exists (
               select 1 from queue_members l
               where l.user_id = ? and l.queue_id = t.queue_id and l.role = 'lead')))))`,
    issuerId,
    issuerId,
    userId,
    userId,
    issuerId,
  );
}
