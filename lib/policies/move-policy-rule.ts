import { asc, eq } from "drizzle-orm";
import { policyRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
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
    const from = order.findIndex((r) => r.id === ruleId);
    const [moved] = order.splice(from, 1);
    order.splice(Math.min(to, order.length), 0, moved!);
    for (const [index, row] of order.entries()) {
      const position = (index + 1) * 10;
      if (row.position !== position)
        await tx.update(policyRules).set({ position }).where(eq(policyRules.id, row.id));
    }
    await appendEvent(tx, {
      type: "policy.rule_moved",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { ruleId, from, to: order.indexOf(moved!), order: order.map((r) => r.id) },
    });
  });
}
