import { asc } from "drizzle-orm";
import { getDb } from "@/db/client";
import { routingRules } from "@/db/schema";
import { untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { reorder } from "@/lib/reorder";
import { renumber } from "@/lib/write-conditions";
import { listRules } from "./list-rules";
import { findRule, requireRoutingAdmin } from "./rule-access";
import { RoutingRuleMove } from "./rule-input";

/**
 * Moves a rule to another place in the order they are tried. The whole order is renumbered in
 * one write batch (10, 20, 30…), so moves never run out of room between two positions; the batch
 * re-checks the order it was planned on, so of two admins moving rules at once the second is
 * planned again on the first one's order instead of interleaving with it.
 */
export async function moveRule(actor: QueueCaller, ruleId: string, body: unknown) {
  const { to } = parseInput(RoutingRuleMove, body);
  await untilWritten(async () => {
    const db = getDb();
    const manager = await requireRoutingAdmin(db, actor);
    const rule = await findRule(db, ruleId);
    const order = await db
      .select({ id: routingRules.id, position: routingRules.position })
      .from(routingRules)
      .orderBy(asc(routingRules.position), asc(routingRules.createdAt));
    const moved = reorder(order, ruleId, to);
    await commit([
      ...stillAdmin(manager),
      ...renumber(routingRules, { sql: "1", args: [] }, order, moved.changes),
      eventRows({
        type: "routing.rule_moved",
        queueId: rule.queueId,
        actor: manager.eventActor,
        data: { ruleId, from: moved.from, to: moved.to, order: moved.order },
      }),
    ]);
  });
  return listRules(actor);
}
