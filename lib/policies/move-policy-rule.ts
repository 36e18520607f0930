import { asc } from "drizzle-orm";
import { getDb } from "@/db/client";
import { policyRules } from "@/db/schema";
import { untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { reorder } from "@/lib/reorder";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { renumber } from "@/lib/write-conditions";
import { sameScope } from "./create-policy-rule";
import { findWritableRule, stillWritable } from "./policy-access";
import { PolicyRuleMove } from "./policy-input";

/**
 * Moves a rule within its list (its queue's, or the global one), renumbering the list in one
 * write batch that re-checks the order it was planned on: of two leads moving rules at once, the
 * second is planned again on the first one's order. Order is the last tie-break of precedence:
 * between rules of the same effect and specificity, the one listed first is the one recorded.
 */
export async function movePolicyRule(caller: QueueCaller, ruleId: string, body: unknown) {
  const { to } = parseInput(PolicyRuleMove, body);
  await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const rule = await findWritableRule(db, manager, ruleId);
    const order = await db
      .select({ id: policyRules.id, position: policyRules.position })
      .from(policyRules)
      .where(sameScope(rule.queueId))
      .orderBy(asc(policyRules.position), asc(policyRules.createdAt));
    const moved = reorder(order, ruleId, to);
    await commit([
      ...stillWritable(manager, rule.queueId),
      ...renumber(
        policyRules,
        { sql: "queue_id is ?", args: [rule.queueId] },
        order,
        moved.changes,
      ),
      eventRows({
        type: "policy.rule_moved",
        queueId: rule.queueId,
        actor: manager.eventActor,
        data: { ruleId, from: moved.from, to: moved.to, order: moved.order },
      }),
    ]);
  });
}
