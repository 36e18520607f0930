import { eq, or } from "drizzle-orm";
import type { Executor } from "@/db/client";
import type { Statement } from "@/db/write-batch";
import { policyRules, queues, type PolicyRule } from "@/db/schema";
import { NotFoundError } from "@/lib/errors";
import {
  findManagedQueue,
  findQueueFor,
  requireAdmin,
  requireOpen,
  stillAdmin,
  stillManages,
  stillOpen,
  type Manager,
} from "@/lib/queues/queue-access";

// Who may change which policy rule: a queue's rules its leads (and admins); rules that apply
// everywhere only installation admins. Reading follows queue visibility: the global rules and
// the rules of the queues the caller belongs to.

/** The queue a rule is written for (checked writable by the caller), or null for a global one. */
export async function writableScope(
  db: Executor,
  manager: Manager,
  queue: string | null | undefined,
): Promise<string | null> {
  if (queue === null || queue === undefined) {
    requireAdmin(manager, "write rules that apply in every queue");
    return null;
  }
  const [found] = await db
    .select({ id: queues.id })
    .from(queues)
    .where(or(eq(queues.id, queue), eq(queues.name, queue)));
  // Worded as findQueueFor words a queue the caller may not see: the two cannot be told apart.
  if (!found) throw new NotFoundError("Queue");
  const access = await findManagedQueue(db, manager, found.id);
  requireOpen(access.queue, null);
  return found.id;
}

/** A rule the caller may see (404 otherwise, as if it did not exist). */
export async function findVisibleRule(
  db: Executor,
  manager: Manager,
  ruleId: string,
): Promise<PolicyRule> {
  const [rule] = await db.select().from(policyRules).where(eq(policyRules.id, ruleId));
  if (!rule) throw new NotFoundError("Policy rule");
  if (rule.queueId) {
    await findQueueFor(db, manager, rule.queueId).catch(() => {
      throw new NotFoundError("Policy rule");
    });
  }
  return rule;
}

/** A rule the caller may change. */
export async function findWritableRule(
  db: Executor,
  manager: Manager,
  ruleId: string,
): Promise<PolicyRule> {
  const rule = await findVisibleRule(db, manager, ruleId);
  await writableScope(db, manager, rule.queueId);
  return rule;
}

/** The guards of a write to a list writableScope allowed: the caller may still write it. */
export function stillWritable(manager: Manager, queueId: string | null): Statement[] {
  return queueId === null
    ? stillAdmin(manager)
    : [...stillManages(manager, queueId), stillOpen(queueId)];
}
