import { z } from "zod";
import { getDb } from "@/db/client";
import { queueMembers, queues } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { ConflictError } from "@/lib/errors";
import { changedRow, insertRows, untilWritten } from "@/db/write-batch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { managerOf, requireAdmin, stillAdmin, stillOpen, type QueueCaller } from "./queue-access";
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
} from "./queue-input";
import { loadQueueDetail, type QueueDetailView } from "./queue-views";

export const CreateQueueInput = z.strictObject({
  name: QueueName,
  requiredApprovals: RequiredApprovals.default(1),
  separationOfDuties: z.boolean().default(false),
  defaultTimeoutSecs: DefaultTimeoutSecs.default(3600),
  escalationQueueId: EscalationQueueId.default(null),
  claimMode: ClaimMode.default("mark"),
  approveOnTimeout: ApproveOnTimeout.default(false),
  approveOnTimeoutMinSecs: ApproveOnTimeoutMinSecs.default(300),
});
export type CreateQueueInput = z.input<typeof CreateQueueInput>;

/**
 * An installation admin makes a queue; a reviewer who does becomes its first member (as admin),
 * so its batches reach them. The operator's queues start empty.
 */
export async function createQueue(caller: QueueCaller, body: unknown): Promise<QueueDetailView> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    requireAdmin(manager, "create queues");
    const input = parseInput(CreateQueueInput, body);
    if (input.escalationQueueId !== null)
      await checkEscalationTarget(db, manager, null, input.escalationQueueId);
    const holder = await nameTakenBy(db, input.name);
    if (holder)
      throw new ConflictError("already_exists", `A queue named '${input.name}' exists.`, holder);
    const now = Date.now();
    const queueId = newId();
    const creator = manager.reviewer;
    await commit([
      ...stillAdmin(manager),
      ...(input.escalationQueueId !== null ? [stillOpen(input.escalationQueueId)] : []),
      // A queue of that name made meanwhile aborts the batch; the next attempt answers 409.
      insertRows(
        queues,
        [{ id: queueId, createdAt: now, ...input }],
        " on conflict (name) do nothing",
      ),
      changedRow(),
      ...(creator
        ? [
            insertRows(queueMembers, [
              { queueId, userId: creator.id, role: "admin", createdAt: now },
            ]),
          ]
        : []),
      eventRows(
        {
          type: "queue.created",
          queueId,
          actor: manager.eventActor,
          at: now,
          data: { ...input },
        },
        ...(creator
          ? [
              {
                type: "member.added",
                queueId,
                actor: manager.eventActor,
                at: now,
                data: { userId: creator.id, name: creator.name, role: "admin" },
              },
            ]
          : []),
      ),
    ]);
    // The detail view joins several tables: read after the commit, outside the write lock.
    return loadQueueDetail(db, manager, queueId);
  });
}
