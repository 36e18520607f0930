import { getDb } from "@/db/client";
import { policyRules, type PolicyRule } from "@/db/schema";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { nameFree, refuseNameClash } from "./create-policy-rule";
import { loadPolicyRuleView, type PolicyRuleView } from "./list-policy-rules";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { findWritableRule, stillWritable } from "./policy-access";
import { PolicyRuleUpdate } from "./policy-input";

/**
 * Changes the fields sent (`null` clears an optional condition); the event keeps before and
 * after. Reads, then one write batch (db/write-batch.ts) whose update is a compare-and-swap on
 * the version read: of two leads editing at once, the second is applied to the first one's result.
 */
export async function updatePolicyRule(
  caller: QueueCaller,
  ruleId: string,
  body: unknown,
): Promise<PolicyRuleView> {
  const input = parseInput(PolicyRuleUpdate, body);
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const before = await findWritableRule(db, manager, ruleId);
    if (input.name !== undefined) await refuseNameClash(db, before.queueId, input.name, ruleId);
    const changes = {
      ...(input.name !== undefined && { name: input.name }),
      ...(input.effect !== undefined && { effect: input.effect }),
      ...(input.agent !== undefined && {
        agentKeyId: input.agent ? await resolveAgent(db, input.agent) : null,
      }),
      ...(input.toolPattern !== undefined && { toolPattern: input.toolPattern }),
      ...(input.argPredicates !== undefined && { argPredicates: input.argPredicates }),
      ...(input.costAbove !== undefined && { costAbove: input.costAbove }),
      ...(input.reason !== undefined && { reason: input.reason || null }),
      ...(input.enabled !== undefined && { enabled: input.enabled }),
      updatedAt: Math.max(Date.now(), before.updatedAt + 1),
    };
    const after: PolicyRule = { ...before, ...changes };
    await commit([
      ...stillWritable(manager, before.queueId),
      ...(input.name !== undefined ? [nameFree(before.queueId, input.name, ruleId)] : []),
      // Position too: a move does not change the version, and the event logs the rule whole.
      updateRow(
        policyRules,
        changes,
        "id = ? and updated_at = ? and position = ?",
        ruleId,
        before.updatedAt,
        before.position,
      ),
      changedRow(),
      eventRows({
        type: "policy.rule_updated",
        queueId: after.queueId,
        actor: manager.eventActor,
        data: { before, after },
      }),
    ]);
    return loadPolicyRuleView(db, manager, after);
  });
}
