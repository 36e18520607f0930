import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { guard, type Statement } from "@/db/write-batch";
import { queueMembers, queues, type Queue, type QueueRole } from "@/db/schema";
import { actorRef, requireReviewer, type Actor, type ReviewerActor } from "@/lib/auth/actor";
import { ConflictError, ForbiddenError, NotFoundError } from "@/lib/errors";
import type { EventActor } from "@/lib/events/append-event";

// Who may do what with a queue. A member's role holds in that queue; an admin role in any queue
// makes an installation admin, who may create and archive queues and manage every queue.

/** `npm run admin`: whoever can run it owns the database, so it acts as an admin everywhere. */
export type OperatorActor = { kind: "operator" };
export const OPERATOR: OperatorActor = { kind: "operator" };

/** Who calls a queue verb: a reviewer (web app, API) or the operator (CLI). Agents are refused. */
export type QueueCaller = Actor | OperatorActor;

/** The caller, resolved once per verb. */
export type Manager = {
  /** null for the operator */
  reviewer: ReviewerActor | null;
  isAdmin: boolean;
  eventActor: EventActor;
};

const OPERATOR_EVENT_ACTOR: EventActor = { kind: "system", id: null, name: "Operator (admin CLI)" };

export async function isInstallationAdmin(db: Executor, userId: string): Promise<boolean> {
  const [row] = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, userId), eq(queueMembers.role, "admin")))
    .limit(1);
  return row !== undefined;
}

/** 403 for an agent key; otherwise who is asking and whether they are an installation admin. */
export async function managerOf(db: Executor, caller: QueueCaller): Promise<Manager> {
  if (caller.kind === "operator")
    return { reviewer: null, isAdmin: true, eventActor: OPERATOR_EVENT_ACTOR };
  const reviewer = requireReviewer(caller);
  return {
    reviewer,
    isAdmin: await isInstallationAdmin(db, reviewer.id),
    eventActor: actorRef(reviewer),
  };
}

export type QueueAccess = { queue: Queue; role: QueueRole | null };

/** The queue if the caller may see it (a member, or an installation admin); else 404, like a missing one. */
export async function findQueueFor(
  db: Executor,
  manager: Manager,
  queueId: string,
): Promise<QueueAccess> {
  const [queue] = await db.select().from(queues).where(eq(queues.id, queueId));
  if (!queue) throw new NotFoundError("Queue");
  const role = manager.reviewer ? await roleIn(db, queueId, manager.reviewer.id) : null;
  if (role === null && !manager.isAdmin) throw new NotFoundError("Queue");
  return { queue, role };
}

export async function roleIn(
  db: Executor,
  queueId: string,
  userId: string,
): Promise<QueueRole | null> {
  const [row] = await db
    .select({ role: queueMembers.role })
    .from(queueMembers)
    .where(and(eq(queueMembers.queueId, queueId), eq(queueMembers.userId, userId)));
  return row?.role ?? null;
}

export function canManage(manager: Manager, role: QueueRole | null): boolean {
  return manager.isAdmin || role === "lead" || role === "admin";
}

/** A queue the caller may change: its lead or an installation admin (403 for its reviewers). */
export async function findManagedQueue(
  db: Executor,
  manager: Manager,
  queueId: string,
): Promise<QueueAccess> {
  const access = await findQueueFor(db, manager, queueId);
  if (!canManage(manager, access.role))
    throw new ForbiddenError("Only a lead of this queue or an admin can change it.");
  return access;
}

/** Installation-wide powers: creating and archiving queues, granting admin. */
export function requireAdmin(manager: Manager, what: string): void {
  if (!manager.isAdmin) throw new ForbiddenError(`Only an admin can ${what}.`);
}

/** Archived queues keep their history but take no changes. */
export function requireOpen(queue: Queue, current: unknown): void {
  if (queue.archivedAt !== null)
    throw new ConflictError("queue_archived", `Queue '${queue.name}' is archived.`, current);
}

// Guards for write batches (db/write-batch.ts): a verb reads the caller's powers before it writes,
// outside the write lock, so its batch re-checks them; one who lost a role meanwhile changes
// nothing, and the verb's next attempt answers them as their new role deserves (403/404).

/** The caller is still an installation admin (the operator always is). */
export function stillAdmin(manager: Manager): Statement[] {
  return manager.reviewer
    ? [
        guard(
          "exists (select 1 from queue_members where user_id = ? and role = 'admin')",
          manager.reviewer.id,
        ),
      ]
    : [];
}

/** The caller still manages the queue: an installation admin, or its lead (canManage). */
export function stillManages(manager: Manager, queueId: string): Statement[] {
  return manager.reviewer
    ? [
        guard(
          "exists (select 1 from queue_members where user_id = ? and (role = 'admin' or (queue_id = ? and role = 'lead')))",
          manager.reviewer.id,
          queueId,
        ),
      ]
    : [];
}

/** The caller still sees the queue: a member, or an installation admin (findQueueFor). */
export function stillSees(manager: Manager, queueId: string): Statement[] {
  return manager.reviewer
    ? [
        guard(
          "exists (select 1 from queue_members where user_id = ? and (role = 'admin' or queue_id = ?))",
          manager.reviewer.id,
          queueId,
        ),
      ]
    : [];
}

/**
 * A person a lead may learn of: a member of a queue the caller leads (admins and the operator see
 * everyone). Outside it, a lead is answered as if the address had no account (issue 24): adding
 * such a person would also have handed the lead their password reset (found by review).
 */
const SHARES_A_LED_QUEUE =
  "exists (select 1 from queue_members them join queue_members me on me.queue_id = them.queue_id where them.user_id = ? and me.user_id = ? and me.role = 'lead')";

export async function leadSees(db: Executor, manager: Manager, userId: string): Promise<boolean> {
  if (manager.isAdmin || !manager.reviewer) return true;
  const led = db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, manager.reviewer.id), eq(queueMembers.role, "lead")));
  const [row] = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, userId), inArray(queueMembers.queueId, led)))
    .limit(1);
  return row !== undefined;
}

/** The write's re-check of leadSees. */
export function stillLeadSees(manager: Manager, userId: string): Statement[] {
  return manager.isAdmin || !manager.reviewer
    ? []
    : [guard(SHARES_A_LED_QUEUE, userId, manager.reviewer.id)];
}

/** The queue is still open (requireOpen). */
export function stillOpen(queueId: string): Statement {
  return guard("exists (select 1 from queues where id = ? and archived_at is null)", queueId);
}
