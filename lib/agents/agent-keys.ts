import { z } from "zod";
import { asc, eq, inArray } from "drizzle-orm";
import { getDb } from "@/db/client";
import { AGENT_MODES, agentKeyQueues, agentKeys, queues, users } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime } from "@/lib/ids";
import { managerOf, requireAdmin, stillAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { managedQueueIds } from "./agent-key-access";

/** The body of `PATCH /agents/{id}`: the agent's policy mode. */
export const AgentModeInput = z.strictObject({ mode: z.enum(AGENT_MODES) });

// Agent keys as admins (every key) and leads (the keys whose default queue they lead) see them:
// who the agent is, where it may ask, when it was last used, and its mode — the switch that
// decides whether its calls meet the policy rules at all.

export type AgentKeyView = Awaited<ReturnType<typeof listAgentKeys>>[number];

export async function listAgentKeys(caller: QueueCaller, options: { id?: string } = {}) {
  const db = getDb();
  const led = await managedQueueIds(db, await managerOf(db, caller));
  const rows = await db
    .select({
      key: agentKeys,
      queueName: queues.name,
      ownerName: users.name,
      ownerEmail: users.email,
    })
    .from(agentKeys)
    .innerJoin(queues, eq(queues.id, agentKeys.defaultQueueId))
    .leftJoin(users, eq(users.id, agentKeys.ownerUserId))
    .where(options.id ? eq(agentKeys.id, options.id) : undefined)
    .orderBy(asc(agentKeys.name), asc(agentKeys.createdAt));
  const visible = led ? rows.filter((r) => led.has(r.key.defaultQueueId)) : rows;
  const targets = visible.length
    ? await db
        .select({ agentKeyId: agentKeyQueues.agentKeyId, id: queues.id, name: queues.name })
        .from(agentKeyQueues)
        .innerJoin(queues, eq(queues.id, agentKeyQueues.queueId))
        .where(
          inArray(
            agentKeyQueues.agentKeyId,
            visible.map((r) => r.key.id),
          ),
        )
        .orderBy(asc(queues.name))
    : [];
  const now = Date.now();
  return visible.map(({ key, queueName, ownerName, ownerEmail }) => ({
    id: key.id,
    name: key.name,
    keyPrefix: key.keyPrefix,
    mode: key.mode,
    defaultQueue: { id: key.defaultQueueId, name: queueName },
    /** every queue the key may target, the default included */
    queues: targets.filter((t) => t.agentKeyId === key.id).map(({ id, name }) => ({ id, name })),
    owner: key.ownerUserId
      ? { id: key.ownerUserId, name: ownerName ?? "", email: ownerEmail ?? "" }
      : null,
    createdAt: isoTime(key.createdAt),
    revokedAt: isoTime(key.revokedAt),
    lastUsedAt: isoTime(key.lastUsedAt),
    /** until when the key a rotation replaced still works (null: none does) */
    previousKeyExpiresAt:
      key.previousKeyExpiresAt !== null && key.previousKeyExpiresAt > now && !key.revokedAt
        ? isoTime(key.previousKeyExpiresAt)
        : null,
  }));
}

/** One key as `listAgentKeys` shows it (the caller manages it: checked by the verb). */
export async function agentKeyView(caller: QueueCaller, agentId: string): Promise<AgentKeyView> {
  const [view] = await listAgentKeys(caller, { id: agentId });
  if (!view) throw new NotFoundError("Agent key");
  return view;
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
  return agentKeyView(caller, agentId);
}
