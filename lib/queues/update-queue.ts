import { z } from "zod";
import { getDb } from "@/db/client";
import { queues, type Queue } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { ConflictError } from "@/lib/errors";
import { changedRow, guard, untilWritten, updateRow } from "@/db/write-batch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { unchangedRow } from "@/lib/write-conditions";
import {
  findManagedQueue,
  managerOf,
  requireOpen,
  stillManages,
  stillOpen,
  type QueueCaller,
} from "./queue-access";
import {
  ApproveOnTimeout,
  ApproveOnTimeoutMinSecs,
  checkEscalationTarget,
  ClaimMode,
  DefaultTimeoutSecs,
  EscalationQueueId,
  nameTakenBy,
  QueueName,
  RequiredApprovals,
  SlackChannelId,
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
    approveOnTimeout: ApproveOnTimeout.optional(),
    approveOnTimeoutMinSecs: ApproveOnTimeoutMinSecs.optional(),
    slackChannelId: SlackChannelId.optional(),
  })
  .refine((input) => Object.values(input).some((v) => v !== undefined), {
    message: "name at least one setting to change",
  });
export type UpdateQueueInput = z.input<typeof UpdateQueueInput>;

type Setting = keyof z.output<typeof UpdateQueueInput>;

/**
 * A lead of the queue or an admin changes its settings; the event lists each change, before and
 * after. Reads, then one write batch (db/write-batch.ts) whose update carries the queue as read
 * (open, each changed setting at its old value), so the event's "before" is what it replaced.
 */
export async function updateQueue(
  caller: QueueCaller,
  queueId: string,
  body: unknown,
): Promise<QueueDetailView> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const input = parseInput(UpdateQueueInput, body);
    const { queue } = await findManagedQueue(db, manager, queueId);
    if (queue.archivedAt !== null) requireOpen(queue, await loadQueueView(db, manager, queue.id));

    const changes: Partial<Record<Setting, { before: unknown; after: unknown }>> = {};
    for (const [field, after] of Object.entries(input) as [Setting, unknown][]) {
      if (after !== undefined && queue[field] !== after)
        changes[field] = { before: queue[field], after };
    }
    if (Object.keys(changes).length === 0) return loadQueueDetail(db, manager, queue.id);

    if (changes.escalationQueueId && input.escalationQueueId)
      await checkEscalationTarget(db, manager, queue.id, input.escalationQueueId);
    if (changes.name) {
      const holder = await nameTakenBy(db, input.name!);
      if (holder)
        throw new ConflictError("already_exists", `A queue named '${input.name}' exists.`, holder);
    }

    const set = Object.fromEntries(
      Object.entries(changes).map(([field, change]) => [field, change.after]),
    ) as Partial<Queue>;
    const before = Object.fromEntries(
      Object.entries(changes).map(([field, change]) => [field, change.before]),
    ) as Partial<Queue>;
    const asRead = unchangedRow(queues, { ...before, archivedAt: null });
    await commit([
      ...stillManages(manager, queue.id),
      ...(changes.escalationQueueId && input.escalationQueueId
        ? [stillOpen(input.escalationQueueId)]
        : []),
      // A queue that took the name meanwhile aborts the batch; the next attempt answers 409.
      ...(changes.name
        ? [
            guard(
              "not exists (select 1 from queues where name = ? and id <> ?)",
              input.name!,
              queue.id,
            ),
          ]
        : []),
      updateRow(queues, set, `id = ? and ${asRead.sql}`, queue.id, ...asRead.args),
      changedRow(),
      eventRows({
        type: "queue.updated",
        queueId: queue.id,
        actor: manager.eventActor,
        data: { name: input.name ?? queue.name, changes },
      }),
    ]);
    return loadQueueDetail(db, manager, queue.id);
  });
}
