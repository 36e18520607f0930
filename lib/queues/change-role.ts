import { z } from "zod";
import { getDb } from "@/db/client";
import { QUEUE_ROLES } from "@/db/schema";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import {
  managerOf,
  requireAdmin,
  requireOpen,
  stillAdmin,
  stillManages,
  stillOpen,
  type QueueCaller,
} from "./queue-access";
import { findManagedMember, membershipAsRead, refuseLastAdmin } from "./member-rules";
import type { QueueMemberView } from "./queue-views";

export const ChangeRoleInput = z.strictObject({ role: z.enum(QUEUE_ROLES) });
export type ChangeRoleInput = z.input<typeof ChangeRoleInput>;

/**
 * A lead moves members between reviewer and lead; only an admin grants or takes the admin role.
 * Reads, then one write batch (db/write-batch.ts) whose update carries the membership as read and,
 * when it takes an admin role away, that another admin remains.
 */
export async function changeRole(
  caller: QueueCaller,
  queueId: string,
  userId: string,
  body: unknown,
): Promise<QueueMemberView> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const input = parseInput(ChangeRoleInput, body);
    const { queue, member } = await findManagedMember(db, manager, queueId, userId);
    if (input.role === "admin") requireAdmin(manager, "grant the admin role");
    requireOpen(queue, member);
    if (member.role === input.role) return member;
    await refuseLastAdmin(db, queue.id, member);

    const asRead = membershipAsRead(queue.id, member);
    await commit([
      // Granting or taking the admin role needs an admin; the rest a lead of this queue.
      ...(input.role === "admin" || member.role === "admin"
        ? stillAdmin(manager)
        : stillManages(manager, queue.id)),
      stillOpen(queue.id),
      statement(
        `update queue_members set role = ? where ${asRead.sql}`,
        input.role,
        ...asRead.args,
      ),
      changedRow(),
      eventRows({
        type: "member.role_changed",
        queueId: queue.id,
        actor: manager.eventActor,
        data: { userId, name: member.name, before: member.role, after: input.role },
      }),
    ]);
    return { ...member, role: input.role };
  });
}
