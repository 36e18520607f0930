import { eq, max } from "drizzle-orm";
import { getDb } from "@/db/client";
import { routingRules } from "@/db/schema";
import { guard, insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { stillAdmin, stillOpen, type QueueCaller } from "@/lib/queues/queue-access";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { listRules } from "./list-rules";
import { requireRoutingAdmin, resolveReferences } from "./rule-access";
import { RoutingRuleInput } from "./rule-input";

/**
 * Adds a rule (by default after the last one). Reads, then one write batch (db/write-batch.ts)
 * that re-checks the name free, the last position as read and the queue open.
 */
export async function createRule(actor: QueueCaller, body: unknown) {
  const input = parseInput(RoutingRuleInput, body);
  const id = await untilWritten(async () => {
    const db = getDb();
    const manager = await requireRoutingAdmin(db, actor);
    const refs = await resolveReferences(db, input);
    const [clash] = await db
      .select({ id: routingRules.id })
      .from(routingRules)
      .where(eq(routingRules.name, input.name));
    if (clash)
      throw new ConflictError("already_exists", `A rule named '${input.name}' exists.`, clash);
    const [last] = await db.select({ position: max(routingRules.position) }).from(routingRules);
    const lastPosition = last?.position ?? 0;
    const rule = {
      id: newId(),
      name: input.name,
      position: input.position ?? lastPosition + 10,
      agentKeyId: refs.agentKeyId ?? null,
      toolPattern: input.toolPattern ?? null,
      minCost: input.minCost ?? null,
      queueId: refs.queueId!,
      enabled: input.enabled,
      createdAt: Date.now(),
    };
    await commit([
      ...stillAdmin(manager),
      stillOpen(rule.queueId),
      // A rule of that name made meanwhile aborts the batch; the next attempt answers 409.
      guard("not exists (select 1 from routing_rules where name = ?)", rule.name),
      // After the last rule means after the last one there is, not the last one read.
      ...(input.position === undefined
        ? [guard("(select coalesce(max(position), 0) from routing_rules) = ?", lastPosition)]
        : []),
      insertRows(routingRules, [rule]),
      eventRows({
        type: "routing.rule_created",
        queueId: rule.queueId,
        actor: manager.eventActor,
        data: { rule },
      }),
    ]);
    return rule.id;
  });
  return (await listRules(actor)).find((r) => r.id === id)!;
}
