import { and, asc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, queues, users } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { AgentModeInput } from "@/lib/policies/policy-input";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { isoTime } from "@/lib/ids";
import { managerOf, requireAdmin, type QueueCaller } from "@/lib/queues/queue-access";

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

/** Admins only: the mode applies in every queue the agent reaches. */
export async function setAgentMode(caller: QueueCaller, agentId: string, body: unknown) {
  const { mode } = parseInput(AgentModeInput, body);
  await transact(async (tx) => {
    const manager = await managerOf(tx, caller);
    requireAdmin(manager, "change an agent's mode");
    const [before] = await tx.select().from(agentKeys).where(eq(agentKeys.id, agentId));
    if (!before) throw new NotFoundError("Agent key");
    if (before.mode === mode) return;
    const [changed] = await tx
      .update(agentKeys)
      .set({ mode })
      .where(and(eq(agentKeys.id, agentId), eq(agentKeys.mode, before.mode)))
      .returning({ id: agentKeys.id });
    // Compare-and-swap: of two admins switching at once, the one who lost is told, not logged.
    if (!changed)
      throw new ConflictError(
        "stale_revision",
        "The agent's mode changed meanwhile; reload it.",
        null,
      );
    await appendEvent(tx, {
      type: "agent.mode_changed",
      queueId: before.defaultQueueId,
      actor: manager.eventActor,
      data: { agentId, name: before.name, before: before.mode, after: mode },
    });
  });
  // The agent's next request must meet its new mode, not the one its cached actor holds.
  forgetCachedActors();
  return (await listAgentKeys(caller)).find((key) => key.id === agentId)!;
}
