import { and, eq, isNull, max } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { policyRules } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { newId } from "@/lib/ids";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { loadPolicyRuleView, type PolicyRuleView } from "./list-policy-rules";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { writableScope } from "./policy-access";
import { PolicyRuleInput } from "./policy-input";

export async function createPolicyRule(
  caller: QueueCaller,
  body: unknown,
): Promise<PolicyRuleView> {
  const input = parseInput(PolicyRuleInput, body);
  return transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    const queueId = await writableScope(tx, manager, input.queue);
    await refuseNameClash(tx, queueId, input.name);
    const [last] = await tx
      .select({ position: max(policyRules.position) })
      .from(policyRules)
      .where(sameScope(queueId));
    const now = Date.now();
    const [rule] = await tx
      .insert(policyRules)
      .values({
        id: newId(),
        name: input.name,
        queueId,
        position: (last?.position ?? 0) + 10,
        enabled: input.enabled,
        effect: input.effect,
        agentKeyId: input.agent ? await resolveAgent(tx, input.agent) : null,
        toolPattern: input.toolPattern ?? null,
        argPredicates: input.argPredicates,
        costAbove: input.costAbove ?? null,
        reason: input.reason || null,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    await appendEvent(tx, {
      type: "policy.rule_created",
      queueId,
      actor: manager.eventActor,
      data: { rule },
    });
    return loadPolicyRuleView(tx, manager, rule!);
  });
}

/** The rules listed together: one queue's, or the global ones. */
export function sameScope(queueId: string | null) {
  return queueId === null ? isNull(policyRules.queueId) : eq(policyRules.queueId, queueId);
}

/** Names are unique within a scope, so a rule recorded on a call names one rule. */
export async function refuseNameClash(
  tx: Executor,
  queueId: string | null,
  name: string,
  exceptId?: string,
): Promise<void> {
  const [clash] = await tx
    .select()
    .from(policyRules)
    .where(and(sameScope(queueId), eq(policyRules.name, name)));
  if (clash && clash.id !== exceptId)
    throw new ConflictError("already_exists", `A rule named '${name}' exists there.`, clash);
}
