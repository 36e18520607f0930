import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { queues, type Queue } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { findManagedQueue, managerOf, requireOpen, type QueueCaller } from "./queue-access";
import {
  checkEscalationTarget,
  ClaimMode,
  DefaultTimeoutSecs,
  EscalationQueueId,
  nameTakenBy,
  QueueName,
  RequiredApprovals,
} from "./queue-input";
import { loadQueueDetail, loadQueueView, type QueueDetailView } from "./queue-views";

// Strict: a misspelt field is a 400, not a silent no-op.
export const UpdateQueueInput = z
  .strictObject({
    name: QueueName.optional(),
    requiredApprovals: RequiredApprovals.optional(),
    separationOfDuties: z.boolean().optional(),
    defaultTimeoutSecs: DefaultTimeoutSecs.optional(),
    escalationQueueId: EscalationQueueId.optional(),
    claimMode: ClaimMode.optional(),
  })
  .refine((input) => Object.values(input).some((v) => v !== undefined), {
    message: "name at least one setting to change",
  });
export type UpdateQueueInput = z.input<typeof UpdateQueueInput>;

type Setting = keyof z.output<typeof UpdateQueueInput>;

/** A lead of the queue or an admin changes its settings; the event lists each change, before and after. */
export async function updateQueue(
  caller: QueueCaller,
  queueId: string,
  body: unknown,
): Promise<QueueDetailView> {
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const input = parseInput(UpdateQueueInput, body);
    const { queue } = await findManagedQueue(tx, manager, queueId);
    requireOpen(queue, await loadQueueView(tx, manager, queue.id));

    const changes: Partial<Record<Setting, { before: unknown; after: unknown }>> = {};
    for (const [field, after] of Object.entries(input) as [Setting, unknown][]) {
      if (after !== undefined && queue[field] !== after)
        changes[field] = { before: queue[field], after };
    }
    if (Object.keys(changes).length === 0) return loadQueueDetail(tx, manager, queue.id);

    if (changes.escalationQueueId && input.escalationQueueId)
      await checkEscalationTarget(tx, manager, queue.id, input.escalationQueueId);
    if (changes.name) {
      const holder = await nameTakenBy(tx, input.name!);
      if (holder)
        throw new ConflictError("already_exists", `A queue named '${input.name}' exists.`, holder);
    }

    const set = Object.fromEntries(
      Object.entries(changes).map(([field, change]) => [field, change.after]),
    ) as Partial<Queue>;
    // Only an open queue changes: the row is re-checked in the write itself.
    const [updated] = await tx
      .update(queues)
      .set(set)
      .where(and(eq(queues.id, queue.id), isNull(queues.archivedAt)))
      .returning({ id: queues.id });
    if (!updated)
      throw new ConflictError("queue_archived", `Queue '${queue.name}' is archived.`, null);

    await appendEvent(tx, {
      type: "queue.updated",
      queueId: queue.id,
      actor: manager.eventActor,
      data: { name: input.name ?? queue.name, changes },
    });
    return loadQueueDetail(tx, manager, queue.id);
  });
}
