import { asc, eq, inArray, sql } from "drizzle-orm";
import { getDb, type Executor } from "@/db/client";
import { queueMembers, queues, users, type QueueRole } from "@/db/schema";
import { isoTime } from "@/lib/ids";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { memberIdsOf, peopleManagerOf, type PeopleManager } from "./people-access";

export type PersonStatus = "active" | "invited" | "deactivated";

export type PersonView = {
  id: string;
  email: string;
  name: string;
  /** invited: no password set yet (the invite link not used) */
  status: PersonStatus;
  queues: { id: string; name: string; role: QueueRole }[];
  /** when they last signed in */
  lastSignInAt: string | null;
  createdAt: string;
  deactivatedAt: string | null;
};

/** `GET /people`: everyone for an admin; a lead sees the members of the queues they lead. */
export async function listPeople(caller: QueueCaller): Promise<{ people: PersonView[] }> {
  const db = getDb();
  const manager = await peopleManagerOf(db, caller);
  const ids = manager.ledQueueIds ? await memberIdsOf(db, manager.ledQueueIds) : null;
  return { people: await loadPeople(db, manager, ids) };
}

/** People as `manager` sees them: `ids` (null: everyone), by name. */
export async function loadPeople(
  db: Executor,
  manager: PeopleManager,
  ids: string[] | null,
): Promise<PersonView[]> {
  if (ids?.length === 0) return [];
  const rows = await db
    // The subqueries name "user"."id" in full: drizzle leaves the table off a column of a
    // one-table select, which inside them would mean the subquery's own id.
    .select({
      user: users,
      hasPassword: sql<number>`exists (select 1 from account a where a.user_id = "user"."id" and a.provider_id = 'credential' and a.password is not null)`,
      // recorded at each sign-in; sessions from before that column, as a fallback
      lastSignInAt: sql<
        number | null
      >`coalesce("user"."last_sign_in_at", (select max(s.created_at) from session s where s.user_id = "user"."id"))`,
    })
    .from(users)
    .where(ids ? inArray(users.id, ids) : undefined)
    .orderBy(asc(users.name), asc(users.email));
  const memberships = await db
    .select({
      userId: queueMembers.userId,
      queueId: queueMembers.queueId,
      role: queueMembers.role,
      queueName: queues.name,
    })
    .from(queueMembers)
    .innerJoin(queues, eq(queues.id, queueMembers.queueId))
    .where(ids ? inArray(queueMembers.userId, ids) : undefined)
    .orderBy(asc(queues.name));
  // A lead sees only the memberships of the queues they lead: the rest is not theirs to know.
  const visible = (queueId: string) =>
    !manager.ledQueueIds || manager.ledQueueIds.includes(queueId);
  return rows.map(({ user, hasPassword, lastSignInAt }) => ({
    id: user.id,
    email: user.email,
    name: user.name,
    status: user.deactivatedAt !== null ? "deactivated" : hasPassword ? "active" : "invited",
    queues: memberships
      .filter((m) => m.userId === user.id && visible(m.queueId))
      .map((m) => ({ id: m.queueId, name: m.queueName, role: m.role })),
    lastSignInAt: isoTime(lastSignInAt === null ? null : Number(lastSignInAt)),
    createdAt: user.createdAt.toISOString(),
    deactivatedAt: isoTime(user.deactivatedAt),
  }));
}

export async function loadPerson(
  db: Executor,
  manager: PeopleManager,
  id: string,
): Promise<PersonView> {
  return (await loadPeople(db, manager, [id]))[0]!;
}
