import { asc, eq, inArray, or } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeyQueues, agentKeys, queueMembers, queues, users } from "@/db/schema";
import { requireReviewer, type Actor } from "@/lib/auth/actor";

type Option = { id: string; name: string };

export type HistoryFilterOptions = { queues: Option[]; agents: Option[]; reviewers: Option[] };

/**
 * What the history filters can choose from, limited to what the reviewer may see: their queues,
 * the agents that may send to those queues, and the people who review in them.
 */
export async function historyFilterOptions(actor: Actor): Promise<HistoryFilterOptions> {
  const reviewer = requireReviewer(actor);
  const db = getDb();
  const memberQueues = await db
    .select({ id: queues.id, name: queues.name })
    .from(queueMembers)
    .innerJoin(queues, eq(queues.id, queueMembers.queueId))
    .where(eq(queueMembers.userId, reviewer.id))
    .orderBy(asc(queues.name));
  const queueIds = memberQueues.map((q) => q.id);
  if (queueIds.length === 0) return { queues: [], agents: [], reviewers: [] };

  const [agents, reviewers] = await Promise.all([
    db
      .selectDistinct({ id: agentKeys.id, name: agentKeys.name })
      .from(agentKeys)
      .leftJoin(agentKeyQueues, eq(agentKeyQueues.agentKeyId, agentKeys.id))
      .where(
        or(inArray(agentKeys.defaultQueueId, queueIds), inArray(agentKeyQueues.queueId, queueIds)),
      )
      .orderBy(asc(agentKeys.name), asc(agentKeys.id)),
    db
      .selectDistinct({ id: users.id, name: users.name })
      .from(queueMembers)
      .innerJoin(users, eq(users.id, queueMembers.userId))
      .where(inArray(queueMembers.queueId, queueIds))
      .orderBy(asc(users.name), asc(users.id)),
  ]);
  return { queues: memberQueues, agents, reviewers };
}
