import { and } from "drizzle-orm";
import { z } from "zod";
import { QUEUE_ROLES, queueMembers } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { managerOf, requireAdmin, requireOpen, type QueueCaller } from "./queue-access";
import { anotherAdminRemains, findManagedMember, sameMembership } from "./member-rules";
import { loadMember, type QueueMemberView } from "./queue-views";

export const ChangeRoleInput = z.strictObject({ role: z.enum(QUEUE_ROLES) });
export type ChangeRoleInput = z.input<typeof ChangeRoleInput>;

/** A lead moves members between reviewer and lead; only an admin grants or takes the admin role. */
export async function changeRole(
  caller: QueueCaller,
  queueId: string,
  userId: string,
  body: unknown,
): Promise<QueueMemberView> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const input = parseInput(ChangeRoleInput, body);
    const { queue, member } = await findManagedMember(tx, manager, queueId, userId);
    if (input.role === "admin") requireAdmin(manager, "grant the admin role");
    requireOpen(queue, member);
    if (member.role === input.role) return member;

    const [changed] = await tx
      .update(queueMembers)
      .set({ role: input.role })
      .where(
        and(
          sameMembership(queue.id, userId, member.role),
          member.role === "admin" ? anotherAdminRemains(queue.id, userId) : undefined,
        ),
      )
      .returning();
    if (!changed) {
      throw new ConflictError(
        "last_admin",
        `${member.name} is the last admin of this installation: make someone else an admin first.`,
        member,
      );
    }
    await appendEvent(tx, {
      type: "member.role_changed",
      queueId: queue.id,
      actor: manager.eventActor,
      data: { userId, name: member.name, before: member.role, after: input.role },
    });
    return (await loadMember(tx, queue.id, userId))!;
  });
}
