import { and, asc, eq, inArray, isNull, or, sql } from "drizzle-orm";
import { getDb, type Executor } from "@/db/client";
import { agentKeys, policyRules, queues, type PolicyRule } from "@/db/schema";
import { reviewerQueueIds } from "@/lib/auth/actor";
import { isoTime } from "@/lib/ids";
import {
  canManage,
  findQueueFor,
  managerOf,
  type Manager,
  type QueueCaller,
} from "@/lib/queues/queue-access";
import { describePredicate, specificity } from "./evaluate-policy";

export type PolicyRuleView = Awaited<ReturnType<typeof toViews>>[number];

/**
 * The rules the caller can see — those that apply everywhere and those of their queues (every
 * queue's for an admin) — or, with `queueId`, the rules that apply in that queue. Ordered as
 * they are listed: the global rules, then each queue's, each by position.
 */
export async function listPolicyRules(caller: QueueCaller, options: { queueId?: string } = {}) {
  const db = getDb();
  const manager = await managerOf(db, caller);
  let scope;
  if (options.queueId) {
    await findQueueFor(db, manager, options.queueId);
    scope = or(isNull(policyRules.queueId), eq(policyRules.queueId, options.queueId));
  } else if (!manager.isAdmin) {
    const mine = await reviewerQueueIds(db, manager.reviewer!.id);
    scope = or(isNull(policyRules.queueId), inArray(policyRules.queueId, mine));
  }
  const rows = await db
    .select({ rule: policyRules })
    .from(policyRules)
    .leftJoin(queues, eq(queues.id, policyRules.queueId))
    .where(scope)
    .orderBy(sql`${policyRules.queueId} is not null`, asc(queues.name), asc(policyRules.position));
  return toViews(
    db,
    manager,
    rows.map((r) => r.rule),
  );
}

export async function loadPolicyRuleView(db: Executor, manager: Manager, rule: PolicyRule) {
  return (await toViews(db, manager, [rule]))[0]!;
}

async function toViews(db: Executor, manager: Manager, rules: PolicyRule[]) {
  const queueIds = [...new Set(rules.map((r) => r.queueId).filter((id) => id !== null))];
  const agentIds = [...new Set(rules.map((r) => r.agentKeyId).filter((id) => id !== null))];
  const queueRows = queueIds.length
    ? await db.select().from(queues).where(inArray(queues.id, queueIds))
    : [];
  const agentRows = agentIds.length
    ? await db
        .select({ id: agentKeys.id, name: agentKeys.name })
        .from(agentKeys)
        .where(inArray(agentKeys.id, agentIds))
    : [];
  const queueById = new Map(queueRows.map((q) => [q.id, q]));
  const agentName = new Map(agentRows.map((a) => [a.id, a.name]));
  const roles = new Map<string, boolean>();
  for (const queueId of queueIds) {
    const access = await findQueueFor(db, manager, queueId).catch(() => null);
    roles.set(
      queueId,
      access !== null && access.queue.archivedAt === null && canManage(manager, access.role),
    );
  }
  return rules.map((rule) => ({
    id: rule.id,
    name: rule.name,
    queue: rule.queueId
      ? { id: rule.queueId, name: queueById.get(rule.queueId)?.name ?? "" }
      : null,
    effect: rule.effect,
    agent: rule.agentKeyId
      ? { id: rule.agentKeyId, name: agentName.get(rule.agentKeyId) ?? "(deleted agent)" }
      : null,
    toolPattern: rule.toolPattern,
    argPredicates: rule.argPredicates,
    costAbove: rule.costAbove,
    reason: rule.reason,
    enabled: rule.enabled,
    position: rule.position,
    /** how many conditions the rule sets: among rules of one effect, the most specific decides */
    specificity: specificity(rule),
    /** the rule's conditions in words */
    conditions: describeConditions(rule, agentName.get(rule.agentKeyId ?? "")),
    canEdit: rule.queueId ? (roles.get(rule.queueId) ?? false) : manager.isAdmin,
    createdAt: isoTime(rule.createdAt)!,
    updatedAt: isoTime(rule.updatedAt)!,
  }));
}

export function describeConditions(rule: PolicyRule, agentName?: string): string {
  const parts = [
    rule.agentKeyId && `agent is ${agentName ?? rule.agentKeyId}`,
    rule.toolPattern && `tool matches ${rule.toolPattern}`,
    ...rule.argPredicates.map(describePredicate),
    rule.costAbove !== null && `cost estimate above ${rule.costAbove}`,
  ].filter(Boolean);
  return parts.length ? parts.join(" and ") : "every call";
}

/** The enabled rules that apply in a queue: its own and the global ones. */
export async function rulesForQueue(db: Executor, queueId: string): Promise<PolicyRule[]> {
  return db
    .select()
    .from(policyRules)
    .where(
      and(
        eq(policyRules.enabled, true),
        or(isNull(policyRules.queueId), eq(policyRules.queueId, queueId)),
      ),
    );
}
