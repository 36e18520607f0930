import { eq } from "drizzle-orm";
import { z } from "zod";
import { QUEUE_ROLES, queueMembers, users } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import {
  findManagedQueue,
  managerOf,
  requireAdmin,
  requireOpen,
  type QueueCaller,
} from "./queue-access";
import { loadMember, type QueueMemberView } from "./queue-views";

export const AddMemberInput = z.strictObject({
  email: z.email().transform((e) => e.toLowerCase()),
  role: z.enum(QUEUE_ROLES).default("reviewer"),
});
export type AddMemberInput = z.input<typeof AddMemberInput>;

/** A lead adds an existing reviewer (by email) as reviewer or lead; only an admin grants admin. */
export async function addMember(
  caller: QueueCaller,
  queueId: string,
  body: unknown,
): Promise<QueueMemberView> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const input = parseInput(AddMemberInput, body);
    const { queue } = await findManagedQueue(tx, manager, queueId);
    if (input.role === "admin") requireAdmin(manager, "grant the admin role");
    requireOpen(queue, null);
    const [user] = await tx
      .select({ id: users.id, name: users.name })
      .from(users)
      .where(eq(users.email, input.email));
    if (!user) {
      throw new InvalidRequestError(`No reviewer has the email ${input.email}.`, [
        { path: "email", message: "no reviewer has this email; create their account first" },
      ]);
    }
    const now = Date.now();
    const [added] = await tx
      .insert(queueMembers)
      .values({ queueId: queue.id, userId: user.id, role: input.role, createdAt: now })
      .onConflictDoNothing()
      .returning();
    if (!added) {
      throw new ConflictError(
        "already_exists",
        `${user.name} is already a member of '${queue.name}'.`,
        await loadMember(tx, queue.id, user.id),
      );
    }
    await appendEvent(tx, {
      type: "member.added",
      queueId: queue.id,
      actor: manager.eventActor,
      at: now,
      data: { userId: user.id, name: user.name, role: input.role },
    });
    return (await loadMember(tx, queue.id, user.id))!;
  });
}
