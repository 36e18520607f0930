import { getDb } from "@/db/client";
import { routingRules } from "@/db/schema";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { unchangedRow } from "@/lib/write-conditions";
import { findRule, requireRoutingAdmin } from "./rule-access";

/**
 * Batches it routed keep its id; their cards say "(deleted rule)". The delete carries the rule
 * as read, so the event logs what was deleted; a rule changed or deleted meanwhile aborts the
 * batch, and the next attempt deletes it as it is now (or answers 404).
 */
export async function deleteRule(actor: QueueCaller, ruleId: string): Promise<void> {
  await untilWritten(async () => {
    const db = getDb();
    const manager = await requireRoutingAdmin(db, actor);
    const rule = await findRule(db, ruleId);
    const asRead = unchangedRow(routingRules, rule);
    await commit([
      ...stillAdmin(manager),
      statement(`delete from routing_rules where id = ? and ${asRead.sql}`, ruleId, ...asRead.args),
      changedRow(),
      eventRows({
        type: "routing.rule_deleted",
        queueId: rule.queueId,
        actor: manager.eventActor,
        data: { rule },
      }),
    ]);
  });
}
