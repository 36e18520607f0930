import { eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { routingRules } from "@/db/schema";
import { changedRow, guard, untilWritten, updateRow } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { stillAdmin, stillOpen, type QueueCaller } from "@/lib/queues/queue-access";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { unchangedRow } from "@/lib/write-conditions";
import { listRules } from "./list-rules";
import { findRule, requireRoutingAdmin, resolveReferences } from "./rule-access";
import { RoutingRuleUpdate } from "./rule-input";

export async function updateRule(actor: QueueCaller, ruleId: string, body: unknown) {
  const input = parseInput(RoutingRuleUpdate, body);
  await untilWritten(async () => {
    const db = getDb();
    const manager = await requireRoutingAdmin(db, actor);
    const before = await findRule(db, ruleId);
    const refs = await resolveReferences(db, input);
    const changes = {
      ...(input.name !== undefined && { name: input.name }),
      ...(refs.queueId !== undefined && { queueId: refs.queueId }),
      ...(refs.agentKeyId !== undefined && { agentKeyId: refs.agentKeyId }),
      ...(input.toolPattern !== undefined && { toolPattern: input.toolPattern }),
      ...(input.minCost !== undefined && { minCost: input.minCost }),
      ...(input.position !== undefined && { position: input.position }),
      ...(input.enabled !== undefined && { enabled: input.enabled }),
    };
    // Nothing to change (an empty body) writes nothing, and logs nothing.
    if (Object.keys(changes).length === 0) return;
    const renamed = changes.name !== undefined && changes.name !== before.name;
    if (renamed) {
      const [clash] = await db
        .select({ id: routingRules.id })
        .from(routingRules)
        .where(eq(routingRules.name, changes.name!));
      if (clash)
        throw new ConflictError("already_exists", `A rule named '${changes.name}' exists.`, clash);
    }
    // Compare-and-swap on the row as it was read: of two admins editing at once, the second is
    // applied to the first one's result, and the event's "before" is what it replaced.
    const asRead = unchangedRow(routingRules, before);
    const after = { ...before, ...changes };
    await commit([
      ...stillAdmin(manager),
      ...(refs.queueId !== undefined ? [stillOpen(refs.queueId)] : []),
      ...(renamed
        ? [guard("not exists (select 1 from routing_rules where name = ?)", changes.name!)]
        : []),
      updateRow(routingRules, changes, `id = ? and ${asRead.sql}`, ruleId, ...asRead.args),
      changedRow(),
      eventRows({
        type: "routing.rule_updated",
        queueId: after.queueId,
        actor: manager.eventActor,
        data: { before, after },
      }),
    ]);
  });
  return (await listRules(actor)).find((r) => r.id === ruleId)!;
}
