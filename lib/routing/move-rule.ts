import { asc, eq } from "drizzle-orm";
import { routingRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
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
    const from = order.findIndex((r) => r.id === ruleId);
    const [moved] = order.splice(from, 1);
    order.splice(Math.min(to, order.length), 0, moved!);
    for (const [index, row] of order.entries()) {
      const position = (index + 1) * 10;
      if (row.position !== position)
        await tx.update(routingRules).set({ position }).where(eq(routingRules.id, row.id));
    }
    await appendEvent(tx, {
      type: "routing.rule_moved",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { ruleId, from, to: order.indexOf(moved!), order: order.map((r) => r.id) },
    });
  });
  return listRules(actor);
}
