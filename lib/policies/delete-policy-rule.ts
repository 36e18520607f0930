import { getDb } from "@/db/client";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { findWritableRule, stillWritable } from "./policy-access";

/**
 * Calls it settled keep a copy of it (decision.policy.rule), so their record stays whole. The
 * delete carries the rule's version and place as read, so the event logs what was deleted; a
 * rule changed or deleted meanwhile aborts the batch, and the next attempt deletes it as it is
 * now (or answers 404).
 */
export async function deletePolicyRule(caller: QueueCaller, ruleId: string): Promise<void> {
  await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const rule = await findWritableRule(db, manager, ruleId);
    await commit([
      ...stillWritable(manager, rule.queueId),
      statement(
        "delete from policy_rules where id = ? and updated_at = ? and position = ?",
        ruleId,
        rule.updatedAt,
        rule.position,
      ),
      changedRow(),
      eventRows({
        type: "policy.rule_deleted",
        queueId: rule.queueId,
        actor: manager.eventActor,
        data: { rule },
      }),
    ]);
  });
}
