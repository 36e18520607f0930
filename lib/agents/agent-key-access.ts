import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { agentKeys, queueMembers, type AgentKey } from "@/db/schema";
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

/** The key, if the caller manages it; else 404 (403 for one who leads no queue). */
export async function findManagedKey(
  db: Executor,
  manager: Manager,
  agentId: string,
): Promise<AgentKey> {
  const led = await managedQueueIds(db, manager);
  const [key] = await db.select().from(agentKeys).where(eq(agentKeys.id, agentId));
  if (!key || (led && !led.has(key.defaultQueueId))) throw new NotFoundError("Agent key");
  return key;
}
