import { asc, eq } from "drizzle-orm";
import { policyRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { reorder } from "@/lib/reorder";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { sameScope } from "./create-policy-rule";
import { findWritableRule } from "./policy-access";
import { PolicyRuleMove } from "./policy-input";

/**
 * Moves a rule within its list (its queue's, or the global one), renumbering the list in the
 * one transaction. Order is the last tie-break of precedence: between rules of the same effect
 * and specificity, the one listed first is the one recorded.
 */
export async function movePolicyRule(caller: QueueCaller, ruleId: string, body: unknown) {
  const { to } = parseInput(PolicyRuleMove, body);
  await transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const rule = await findWritableRule(tx, manager, ruleId);
    const order = await tx
      .select({ id: policyRules.id, position: policyRules.position })
      .from(policyRules)
      .where(sameScope(rule.queueId))
      .orderBy(asc(policyRules.position), asc(policyRules.createdAt));
    const moved = reorder(order, ruleId, to);
    for (const change of moved.changes)
      await tx
        .update(policyRules)
        .set({ position: change.position })
        .where(eq(policyRules.id, change.id));
    await appendEvent(tx, {
      type: "policy.rule_moved",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { ruleId, from: moved.from, to: moved.to, order: moved.order },
    });
  });
}
