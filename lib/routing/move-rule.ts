import { asc, eq } from "drizzle-orm";
import { routingRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { reorder } from "@/lib/reorder";
import { listRules } from "./list-rules";
import { findRule, requireRoutingAdmin } from "./rule-access";
import { RoutingRuleMove } from "./rule-input";

/**
 * Moves a rule to another place in the order they are tried. The whole order is renumbered in
 * the one transaction (10, 20, 30…), so moves never run out of room between two positions and
 * two admins moving rules at once serialize instead of interleaving.
 */
export async function moveRule(actor: QueueCaller, ruleId: string, body: unknown) {
  const { to } = parseInput(RoutingRuleMove, body);
  await transact(async (tx) => {
    const manager = await requireRoutingAdmin(tx, actor);
    const rule = await findRule(tx, ruleId);
    const order = await tx
      .select({ id: routingRules.id, position: routingRules.position })
      .from(routingRules)
      .orderBy(asc(routingRules.position), asc(routingRules.createdAt));
    const moved = reorder(order, ruleId, to);
    for (const change of moved.changes)
      await tx
        .update(routingRules)
        .set({ position: change.position })
        .where(eq(routingRules.id, change.id));
    await appendEvent(tx, {
      type: "routing.rule_moved",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { ruleId, from: moved.from, to: moved.to, order: moved.order },
    });
  });
  return listRules(actor);
}
