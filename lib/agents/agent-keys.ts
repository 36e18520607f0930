import { asc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, queues, users } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { AgentModeInput } from "@/lib/policies/policy-input";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/transact";
import { isoTime } from "@/lib/ids";
import { managerOf, requireAdmin, stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";

// Agent keys as admins see them: who the agent is, its default queue, and its mode — the switch
// that decides whether its calls meet the policy rules at all.

export type AgentKeyView = Awaited<ReturnType<typeof listAgentKeys>>[number];

export async function listAgentKeys(caller: QueueCaller) {
  const db = getDb();
  requireAdmin(await managerOf(db, caller), "see agent keys");
  const rows = await db
    .select({ key: agentKeys, queueName: queues.name, ownerName: users.name })
    .from(agentKeys)
    .innerJoin(queues, eq(queues.id, agentKeys.defaultQueueId))
    .leftJoin(users, eq(users.id, agentKeys.ownerUserId))
    .orderBy(asc(agentKeys.name), asc(agentKeys.createdAt));
  return rows.map(({ key, queueName, ownerName }) => ({
    id: key.id,
    name: key.name,
    keyPrefix: key.keyPrefix,
    mode: key.mode,
    defaultQueue: { id: key.defaultQueueId, name: queueName },
    owner: key.ownerUserId ? { id: key.ownerUserId, name: ownerName ?? "" } : null,
    createdAt: isoTime(key.createdAt),
    revokedAt: isoTime(key.revokedAt),
  }));
}

/**
 * Admins only: the mode applies in every queue the agent reaches. Reads, then one write batch
 * (db/write-batch.ts) whose update carries the mode read: of two admins switching at once, the
 * second is applied to the first one's result, and each event's "before" is what it replaced.
 */
export async function setAgentMode(caller: QueueCaller, agentId: string, body: unknown) {
  const { mode } = parseInput(AgentModeInput, body);
  await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    requireAdmin(manager, "change an agent's mode");
    const [before] = await db.select().from(agentKeys).where(eq(agentKeys.id, agentId));
    if (!before) throw new NotFoundError("Agent key");
    if (before.mode === mode) return;
    await commit([
      ...stillAdmin(manager),
      updateRow(agentKeys, { mode }, "id = ? and mode = ?", agentId, before.mode),
      changedRow(),
      eventRows({
        type: "agent.mode_changed",
        queueId: before.defaultQueueId,
        actor: manager.eventActor,
        data: { agentId, name: before.name, before: before.mode, after: mode },
      }),
    ]);
  });
  // The agent's next request must meet its new mode, not the one its cached actor holds.
  forgetCachedActors();
  return (await listAgentKeys(caller)).find((key) => key.id === agentId)!;
}
