import { z } from "zod";
import { getDb } from "@/db/client";
import { agentKeys } from "@/db/schema";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { AGENT_KEY_PREFIX } from "@/lib/auth/actor";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { recheckCredentials } from "@/lib/auth/credential-watch";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime, newSecret, sha256Hex } from "@/lib/ids";
import { managerOf, stillManages, type QueueCaller } from "@/lib/queues/queue-access";
import { findManagedKey } from "./agent-key-access";
import { agentKeyView, type AgentKeyView } from "./agent-keys";
import { agentKeyPrefix } from "./create-agent-key";

export const DEFAULT_ROTATION_GRACE_SECS = 24 * 3600;

export const RotateAgentKeyInput = z.strictObject({
  /** how long the replaced key keeps working (0: it stops at once) */
  graceSecs: z
    .int()
    .min(0)
    .max(30 * 24 * 3600)
    .default(DEFAULT_ROTATION_GRACE_SECS),
});
export type RotateAgentKeyInput = z.input<typeof RotateAgentKeyInput>;

/**
 * A new secret for the agent (shown once); the one it replaces keeps working for `graceSecs`, so a
 * deployment can roll the new one out without failing requests. A key still in the grace of an
 * earlier rotation stops at once: only the newest previous key is kept. One write batch whose
 * update carries the hash read, so of two rotations at once the second replaces the first's key.
 */
export async function rotateAgentKey(
  caller: QueueCaller,
  agentId: string,
  body: unknown,
): Promise<{ agent: AgentKeyView; key: string }> {
  const { graceSecs } = parseInput(RotateAgentKeyInput, body ?? {});
  const key = await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const { key: before, queueIds } = await findManagedKey(db, manager, agentId);
    if (before.revokedAt !== null)
      throw new ConflictError("key_revoked", `The key of '${before.name}' was revoked.`, {
        id: before.id,
        revokedAt: isoTime(before.revokedAt),
      });
    const key = newSecret(AGENT_KEY_PREFIX);
    const now = Date.now();
    const previousKeyExpiresAt = now + graceSecs * 1000;
    await commit([
      ...queueIds.flatMap((queueId) => stillManages(manager, queueId)),
      updateRow(
        agentKeys,
        {
          keyHash: sha256Hex(key),
          keyPrefix: agentKeyPrefix(key),
          previousKeyHash: before.keyHash,
          previousKeyExpiresAt,
        },
        "id = ? and key_hash = ? and revoked_at is null",
        before.id,
        before.keyHash,
      ),
      changedRow(),
      eventRows({
        type: "agent.rotated",
        // on no queue: reviewer streams do not carry key changes (the audit log shows them)
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: {
          agentId: before.id,
          name: before.name,
          defaultQueueId: before.defaultQueueId,
          keyPrefix: agentKeyPrefix(key),
          previousKeyPrefix: before.keyPrefix,
          graceSecs,
          previousKeyExpiresAt: isoTime(previousKeyExpiresAt),
        },
      }),
    ]);
    return key;
  });
  // The replaced key's cached actor must not outlive a zero grace, nor streams of an older key.
  forgetCachedActors();
  void recheckCredentials();
  return { agent: await agentKeyView(caller, agentId), key };
}
