import { getDb } from "@/db/client";
import { agentKeys } from "@/db/schema";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { recheckCredentials } from "@/lib/auth/credential-watch";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { managerOf, stillManages, type QueueCaller } from "@/lib/queues/queue-access";
import { findManagedKey } from "./agent-key-access";
import { agentKeyView, type AgentKeyView } from "./agent-keys";

/**
 * Revokes an agent key at once, and the key a rotation replaced with it. Its next request is 401
 * (here at once, on other instances within the actor cache's second) and its open streams and
 * long-polls end within seconds (lib/auth/credential-watch.ts). Revoking a revoked key changes
 * nothing and answers the key as it is. Its runs, batches and history stay.
 */
export async function revokeAgentKey(caller: QueueCaller, agentId: string): Promise<AgentKeyView> {
  await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const { key: before, queueIds } = await findManagedKey(db, manager, agentId);
    if (before.revokedAt !== null) return;
    const now = Date.now();
    await commit([
      ...queueIds.flatMap((queueId) => stillManages(manager, queueId)),
      updateRow(agentKeys, { revokedAt: now }, "id = ? and revoked_at is null", before.id),
      changedRow(),
      eventRows({
        type: "agent.revoked",
        // on no queue: reviewer streams do not carry key changes (the audit log shows them)
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: {
          agentId: before.id,
          name: before.name,
          defaultQueueId: before.defaultQueueId,
          keyPrefix: before.keyPrefix,
        },
      }),
    ]);
  });
  forgetCachedActors();
  void recheckCredentials();
  return agentKeyView(caller, agentId);
}
