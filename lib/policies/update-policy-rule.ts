import { and, eq } from "drizzle-orm";
import { policyRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { refuseNameClash } from "./create-policy-rule";
import { loadPolicyRuleView, type PolicyRuleView } from "./list-policy-rules";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { findWritableRule } from "./policy-access";
import { PolicyRuleUpdate } from "./policy-input";

/** Changes the fields sent (`null` clears an optional condition); the event keeps before and after. */
export async function updatePolicyRule(
  caller: QueueCaller,
  ruleId: string,
  body: unknown,
): Promise<PolicyRuleView> {
  const input = parseInput(PolicyRuleUpdate, body);
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const before = await findWritableRule(tx, manager, ruleId);
    if (input.name !== undefined) await refuseNameClash(tx, before.queueId, input.name, ruleId);
    const changes = {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.effect !== undefined && { effect: input.effect }),
      ...(input.agent !== undefined && {
        agentKeyId: input.agent ? await resolveAgent(tx, input.agent) : null,
      }),
      ...(input.toolPattern !== undefined && { toolPattern: input.toolPattern }),
      ...(input.argPredicates !== undefined && { argPredicates: input.argPredicates }),
      ...(input.costAbove !== undefined && { costAbove: input.costAbove }),
      ...(input.reason !== undefined && { reason: input.reason || null }),
      ...(input.enabled !== undefined && { enabled: input.enabled }),
      updatedAt: Math.max(Date.now(), before.updatedAt + 1),
    };
    // Compare-and-swap on the version read: of two leads editing at once, one wins.
    const [after] = await tx
      .update(policyRules)
      .set(changes)
      .where(and(eq(policyRules.id, ruleId), eq(policyRules.updatedAt, before.updatedAt)))
      .returning();
    if (!after)
      throw new ConflictError("stale_revision", "The rule changed meanwhile; reload it.", before);
    await appendEvent(tx, {
      type: "policy.rule_updated",
      queueId: after.queueId,
      actor: manager.eventActor,
      data: { before, after },
    });
    return loadPolicyRuleView(tx, manager, after);
  });
}
