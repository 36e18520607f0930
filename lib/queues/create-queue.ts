import { z } from "zod";
import { queueMembers, queues } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { appendEvents } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { newId } from "@/lib/ids";
import { managerOf, requireAdmin, type QueueCaller } from "./queue-access";
import {
  checkEscalationTarget,
  ClaimMode,
  DefaultTimeoutSecs,
  EscalationQueueId,
  nameTakenBy,
  QueueName,
  RequiredApprovals,
} from "./queue-input";
import { loadQueueDetail, type QueueDetailView } from "./queue-views";

export const CreateQueueInput = z.strictObject({
  name: QueueName,
  requiredApprovals: RequiredApprovals.default(1),
  separationOfDuties: z.boolean().default(false),
  defaultTimeoutSecs: DefaultTimeoutSecs.default(3600),
  escalationQueueId: EscalationQueueId.default(null),
  claimMode: ClaimMode.default("mark"),
});
export type CreateQueueInput = z.input<typeof CreateQueueInput>;

/**
 * An installation admin makes a queue; a reviewer who does becomes its first member (as admin),
 * so its batches reach them. The operator's queues start empty.
 */
export async function createQueue(caller: QueueCaller, body: unknown): Promise<QueueDetailView> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    requireAdmin(manager, "create queues");
    const input = parseInput(CreateQueueInput, body);
    if (input.escalationQueueId !== null)
      await checkEscalationTarget(tx, manager, null, input.escalationQueueId);
    const now = Date.now();
    const [queue] = await tx
      .insert(queues)
      .values({ id: newId(), createdAt: now, ...input })
      .onConflictDoNothing({ target: queues.name })
      .returning();
    if (!queue) {
      throw new ConflictError(
        "already_exists",
        `A queue named '${input.name}' exists.`,
        await nameTakenBy(tx, input.name),
      );
    }
    const creator = manager.reviewer;
    if (creator) {
      await tx
        .insert(queueMembers)
        .values({ queueId: queue.id, userId: creator.id, role: "admin", createdAt: now });
    }
    await appendEvents(tx, [
      {
        type: "queue.created",
        queueId: queue.id,
        actor: manager.eventActor,
        at: now,
        data: { ...input },
      },
      ...(creator
        ? [
            {
              type: "member.added",
              queueId: queue.id,
              actor: manager.eventActor,
              at: now,
              data: { userId: creator.id, name: creator.name, role: "admin" },
            },
          ]
        : []),
    ]);
    return loadQueueDetail(tx, manager, queue.id);
  });
}
