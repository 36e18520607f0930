import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { agentKeyQueues, agentKeys, queueMembers, type AgentKey } from "@/db/schema";
import { ForbiddenError, NotFoundError } from "@/lib/errors";
import type { Manager } from "@/lib/queues/queue-access";

// Who may manage which agent keys: an installation admin every key; a queue's lead the keys whose
// default queue they lead (and only within queues they lead). Anyone else: 403, as for any
// installation setting. A key outside a lead's queues does not exist for them (404).

/** The queues the caller leads (all, for an admin: null). 403 for one who leads none. */
export async function managedQueueIds(db: Executor, manager: Manager): Promise<Set<string> | null> {
  if (manager.isAdmin || !manager.reviewer) return null;
  const rows = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(
      and(
        eq(queueMembers.userId, manager.reviewer.id),
        inArray(queueMembers.role, ["lead", "admin"]),
      ),
    );
  if (rows.length === 0)
    throw new ForbiddenError("Only an admin or a queue's lead can manage agent keys.");
  return new Set(rows.map((r) => r.queueId));
}

/**
 * The key and every queue it reaches, if the caller manages it: else 404 (403 for one who leads no
 * queue). A lead manages a key only when they lead every queue it reaches — rotating hands out a
 * working secret and revoking cuts the agent off, in each of them.
 */
export async function findManagedKey(
  db: Executor,
  manager: Manager,
  agentId: string,
): Promise<{ key: AgentKey; queueIds: string[] }> {
  const led = await managedQueueIds(db, manager);
  const [key] = await db.select().from(agentKeys).where(eq(agentKeys.id, agentId));
  if (!key || (led && !led.has(key.defaultQueueId))) throw new NotFoundError("Agent key");
  const targets = await db
    .select({ queueId: agentKeyQueues.queueId })
    .from(agentKeyQueues)
    .where(eq(agentKeyQueues.agentKeyId, key.id));
  const queueIds = [...new Set([key.defaultQueueId, ...targets.map((t) => t.queueId)])];
  if (led && queueIds.some((queueId) => !led.has(queueId)))
    throw new ForbiddenError(
      `'${key.name}' also reaches queues you do not lead: only an admin can rotate or revoke it.`,
    );
  return { key, queueIds };
}
