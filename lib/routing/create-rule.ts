import { eq, max } from "drizzle-orm";
import { routingRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { newId } from "@/lib/ids";
import { listRules } from "./list-rules";
import { requireRoutingAdmin, resolveReferences } from "./rule-access";
import { RoutingRuleInput } from "./rule-input";

export async function createRule(actor: QueueCaller, body: unknown) {
  const input = parseInput(RoutingRuleInput, body);
  const id = await transact(async (tx) => {
    const manager = await requireRoutingAdmin(tx, actor);
    const refs = await resolveReferences(tx, input);
    const [clash] = await tx
      .select({ id: routingRules.id })
      .from(routingRules)
      .where(eq(routingRules.name, input.name));
    if (clash)
      throw new ConflictError("already_exists", `A rule named '${input.name}' exists.`, clash);
    const [last] = await tx.select({ position: max(routingRules.position) }).from(routingRules);
    const rule = {
      id: newId(),
      name: input.name,
      position: input.position ?? (last?.position ?? 0) + 10,
      agentKeyId: refs.agentKeyId ?? null,
      toolPattern: input.toolPattern ?? null,
      minCost: input.minCost ?? null,
      queueId: refs.queueId!,
      enabled: input.enabled,
      createdAt: Date.now(),
    };
    await tx.insert(routingRules).values(rule);
    await appendEvent(tx, {
      type: "routing.rule_created",
      queueId: rule.queueId,
      actor: manager.eventActor,
      data: { rule },
    });
    return rule.id;
  });
  return (await listRules(actor)).find((r) => r.id === id)!;
}
