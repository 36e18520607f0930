import { eq, or } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { queues, routingRules, type RoutingRule } from "@/db/schema";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { ForbiddenError, InvalidRequestError, NotFoundError } from "@/lib/errors";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";

/** Routing decides which team sees what: only installation admins change or read the rules. */
export async function requireRoutingAdmin(db: Executor, actor: QueueCaller) {
  const manager = await managerOf(db, actor);
  if (!manager.isAdmin) throw new ForbiddenError("Only an admin manages routing rules.");
  return manager;
}

export async function findRule(db: Executor, ruleId: string): Promise<RoutingRule> {
  const [rule] = await db.select().from(routingRules).where(eq(routingRules.id, ruleId));
  if (!rule) throw new NotFoundError("Routing rule");
  return rule;
}

/** The ids behind a rule's queue and agent references (given as ids or names). */
export async function resolveReferences(
  db: Executor,
  refs: { queue?: string; agent?: string | null },
): Promise<{ queueId?: string; agentKeyId?: string | null }> {
  const out: { queueId?: string; agentKeyId?: string | null } = {};
  if (refs.queue !== undefined) {
    const [queue] = await db
      .select()
      .from(queues)
      .where(or(eq(queues.id, refs.queue), eq(queues.name, refs.queue)));
    if (!queue || queue.archivedAt !== null) {
      throw new InvalidRequestError("No open queue has that id or name.", [
        { path: "queue", message: "no open queue has that id or name" },
      ]);
    }
    out.queueId = queue.id;
  }
  if (refs.agent === null) out.agentKeyId = null;
  if (refs.agent) out.agentKeyId = await resolveAgent(db, refs.agent);
  return out;
}
