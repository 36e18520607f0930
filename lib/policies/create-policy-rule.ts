import { and, eq, isNull, max } from "drizzle-orm";
import { getDb, type Executor } from "@/db/client";
import { policyRules } from "@/db/schema";
import { guard, insertRows, untilWritten, type Statement } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { loadPolicyRuleView, type PolicyRuleView } from "./list-policy-rules";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { stillWritable, writableScope } from "./policy-access";
import { PolicyRuleInput } from "./policy-input";

/**
 * Adds a rule at the end of its list (its queue's, or the global one). Reads, then one write
 * batch (db/write-batch.ts) that re-checks the caller's right to the list, the name free there
 * and the last position as read.
 */
export async function createPolicyRule(
  caller: QueueCaller,
  body: unknown,
): Promise<PolicyRuleView> {
  const input = parseInput(PolicyRuleInput, body);
  return untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const queueId = await writableScope(db, manager, input.queue);
    await refuseNameClash(db, queueId, input.name);
    const [last] = await db
      .select({ position: max(policyRules.position) })
      .from(policyRules)
      .where(sameScope(queueId));
    const lastPosition = last?.position ?? 0;
    const now = Date.now();
    const rule = {
      id: newId(),
      name: input.name,
      queueId,
      position: lastPosition + 10,
      enabled: input.enabled,
      effect: input.effect,
      agentKeyId: input.agent ? await resolveAgent(db, input.agent) : null,
      toolPattern: input.toolPattern ?? null,
      argPredicates: input.argPredicates,
      costAbove: input.costAbove ?? null,
      reason: input.reason || null,
      createdAt: now,
      updatedAt: now,
    };
    await commit([
      ...stillWritable(manager, queueId),
      nameFree(queueId, rule.name),
      guard(
        "(select coalesce(max(position), 0) from policy_rules where queue_id is ?) = ?",
        queueId,
        lastPosition,
      ),
      insertRows(policyRules, [rule]),
      eventRows({
        type: "policy.rule_created",
        queueId,
        actor: manager.eventActor,
        data: { rule },
      }),
    ]);
    return loadPolicyRuleView(db, manager, rule);
  });
}

/** The rules listed together: one queue's, or the global ones. */
export function sameScope(queueId: string | null) {
  return queueId === null ? isNull(policyRules.queueId) : eq(policyRules.queueId, queueId);
}

/** Names are unique within a scope, so a rule recorded on a call names one rule. */
export async function refuseNameClash(
  db: Executor,
  queueId: string | null,
  name: string,
  exceptId?: string,
): Promise<void> {
  const [clash] = await db
    .select()
    .from(policyRules)
    .where(and(sameScope(queueId), eq(policyRules.name, name)));
  if (clash && clash.id !== exceptId)
    throw new ConflictError("already_exists", `A rule named '${name}' exists there.`, clash);
}

/**
 * The guard that goes with refuseNameClash: a rule that took the name meanwhile aborts the
 * batch, and the next attempt answers 409 `already_exists` with it.
 */
export function nameFree(queueId: string | null, name: string, exceptId = ""): Statement {
  return guard(
    "not exists (select 1 from policy_rules where queue_id is ? and name = ? and id <> ?)",
    queueId,
    name,
    exceptId,
  );
}
