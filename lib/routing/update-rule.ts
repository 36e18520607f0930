import { and, eq } from "drizzle-orm";
import { routingRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { listRules } from "./list-rules";
import { findRule, requireRoutingAdmin, resolveReferences } from "./rule-access";
import { RoutingRuleUpdate } from "./rule-input";

export async function updateRule(actor: QueueCaller, ruleId: string, body: unknown) {
  const input = parseInput(RoutingRuleUpdate, body);
  await transact(async (tx) => {
    const manager = await requireRoutingAdmin(tx, actor);
    const before = await findRule(tx, ruleId);
    const refs = await resolveReferences(tx, input);
    const changes = {
      ...(input.name !== undefined && { name: input.name }),
      ...(refs.queueId !== undefined && { queueId: refs.queueId }),
      ...(refs.agentKeyId !== undefined && { agentKeyId: refs.agentKeyId }),
      ...(input.toolPattern !== undefined && { toolPattern: input.toolPattern }),
      ...(input.minCost !== undefined && { minCost: input.minCost }),
      ...(input.position !== undefined && { position: input.position }),
      ...(input.enabled !== undefined && { enabled: input.enabled }),
    };
    if (changes.name && changes.name !== before.name) {
      const [clash] = await tx
        .select({ id: routingRules.id })
        .from(routingRules)
        .where(eq(routingRules.name, changes.name));
      if (clash)
        throw new ConflictError("already_exists", `A rule named '${changes.name}' exists.`, clash);
    }
    // Compare-and-swap on the row as it was read: two admins editing at once cannot both win.
    const [after] = await tx
      .update(routingRules)
      .set(changes)
      .where(
        and(
          eq(routingRules.id, ruleId),
          eq(routingRules.position, before.position),
          eq(routingRules.name, before.name),
        ),
      )
      .returning();
    if (!after)
      throw new ConflictError("already_exists", "The rule changed meanwhile; reload it.", before);
    await appendEvent(tx, {
      type: "routing.rule_updated",
      queueId: after.queueId,
      actor: manager.eventActor,
      data: { before, after },
    });
  });
  return (await listRules(actor)).find((r) => r.id === ruleId)!;
}
