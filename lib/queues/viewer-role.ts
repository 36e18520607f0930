import { and, asc, eq, inArray, isNull, ne } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { queueMembers, queues, users } from "@/db/schema";

// What the app shell offers a signed-in person (issue 26): the navigation their role can use and
// an empty queue that speaks to them. Reads only; every page and action still authorizes itself.

/** admin: an admin role in any queue; lead: leads a queue; reviewer: anyone else signed in. */
export type ViewerRole = "admin" | "lead" | "reviewer";

export async function viewerRole(db: Executor, userId: string): Promise<ViewerRole> {
  const rows = await db
    .select({ role: queueMembers.role })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, userId), inArray(queueMembers.role, ["admin", "lead"])));
  if (rows.some((row) => row.role === "admin")) return "admin";
  return rows.length > 0 ? "lead" : "reviewer";
}

/** Who runs the open queues the person belongs to: the people to ask for another queue. */
export type QueueContact = { name: string; role: "lead" | "admin"; queueName: string };

/**
 * The leads and admins of the person's own open queues (themselves left out). Only queues they
 * are a member of: a queue's members are theirs to see (lib/queues/get-queue.ts), no one else is.
 */
export async function queueContacts(db: Executor, userId: string): Promise<QueueContact[]> {
  const mine = db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(eq(queueMembers.userId, userId));
  const rows = await db
    .select({ name: users.name, role: queueMembers.role, queueName: queues.name })
    .from(queueMembers)
    .innerJoin(queues, eq(queues.id, queueMembers.queueId))
    .innerJoin(users, eq(users.id, queueMembers.userId))
    .where(
      and(
        inArray(queueMembers.queueId, mine),
        inArray(queueMembers.role, ["admin", "lead"]),
        ne(queueMembers.userId, userId),
        isNull(queues.archivedAt),
        isNull(users.deactivatedAt),
      ),
    )
    .orderBy(asc(queues.name), asc(users.name))
    .limit(6);
  return rows.map((row) => ({
    name: row.name,
    role: row.role === "admin" ? "admin" : "lead",
    queueName: row.queueName,
  }));
}
