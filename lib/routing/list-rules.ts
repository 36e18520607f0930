import { asc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, queues, routingRules } from "@/db/schema";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { isoTime } from "@/lib/ids";
import { requireRoutingAdmin } from "./rule-access";

export type RoutingRuleView = Awaited<ReturnType<typeof listRules>>[number];

/** The rules in the order they are tried. */
export async function listRules(actor: QueueCaller) {
  const db = getDb();
  await requireRoutingAdmin(db, actor);
  const rows = await db
    .select({ rule: routingRules, queueName: queues.name, agentName: agentKeys.name })
    .from(routingRules)
    .innerJoin(queues, eq(queues.id, routingRules.queueId))
    .leftJoin(agentKeys, eq(agentKeys.id, routingRules.agentKeyId))
    .orderBy(asc(routingRules.position), asc(routingRules.createdAt));
  return rows.map(({ rule, queueName, agentName }) => ({
    id: rule.id,
    name: rule.name,
    position: rule.position,
    queue: { id: rule.queueId, name: queueName },
    agent: rule.agentKeyId ? { id: rule.agentKeyId, name: agentName ?? "" } : null,
    toolPattern: rule.toolPattern,
    minCost: rule.minCost,
    enabled: rule.enabled,
    createdAt: isoTime(rule.createdAt),
  }));
}
