import { eq } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { QUEUE_ROLES, queueMembers, users } from "@/db/schema";
import { changedRow, insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime } from "@/lib/ids";
import {
  findManagedQueue,
  leadSees,
  managerOf,
  requireAdmin,
  requireOpen,
  stillAdmin,
  stillLeadSees,
  stillManages,
  stillOpen,
  type QueueCaller,
} from "./queue-access";
import { loadMember, type QueueMemberView } from "./queue-views";

export const AddMemberInput = z.strictObject({
  email: z.email().transform((e) => e.toLowerCase()),
  role: z.enum(QUEUE_ROLES).default("reviewer"),
});
export type AddMemberInput = z.input<typeof AddMemberInput>;

/**
 * A lead adds an existing reviewer (by email) as reviewer or lead; only an admin grants admin.
 * Reads, then one write batch (db/write-batch.ts): a membership added meanwhile aborts it, and
 * the next attempt answers 409 `already_exists` with it.
 */
export async function addMember(
  caller: QueueCaller,
  queueId: string,
  body: unknown,
): Promise<QueueMemberView> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const input = parseInput(AddMemberInput, body);
    const { queue } = await findManagedQueue(db, manager, queueId);
    if (input.role === "admin") requireAdmin(manager, "grant the admin role");
    requireOpen(queue, null);
    const [user] = await db
      .select({ id: users.id, name: users.name, email: users.email })
      .from(users)
      .where(eq(users.email, input.email));
    // A lead adds people already in a queue they lead; anyone else is answered as an unknown
    // address, so the answer names no one outside their queues (issue 24, hole 8).
    if (!user || !(await leadSees(db, manager, user.id))) {
      throw new InvalidRequestError(
        manager.isAdmin
          ? `No reviewer has the email ${input.email}.`
          : `No member of the queues you lead has the email ${input.email}. To add someone from elsewhere, ask an admin.`,
        [{ path: "email", message: "no reviewer has this email; create their account first" }],
      );
    }
    const existing = await loadMember(db, queue.id, user.id);
    if (existing) {
      throw new ConflictError(
        "already_exists",
        `${user.name} is already a member of '${queue.name}'.`,
        existing,
      );
    }
    const now = Date.now();
    await commit([
      ...(input.role === "admin" ? stillAdmin(manager) : stillManages(manager, queue.id)),
      ...stillLeadSees(manager, user.id),
      stillOpen(queue.id),
      insertRows(
        queueMembers,
        [{ queueId: queue.id, userId: user.id, role: input.role, createdAt: now }],
        " on conflict do nothing",
      ),
      changedRow(),
      eventRows({
        type: "member.added",
        queueId: queue.id,
        actor: manager.eventActor,
        at: now,
        data: { userId: user.id, name: user.name, role: input.role },
      }),
    ]);
    return {
      userId: user.id,
      name: user.name,
      email: user.email,
      role: input.role,
      addedAt: isoTime(now),
    };
  });
}
