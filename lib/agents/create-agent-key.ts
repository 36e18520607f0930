import { randomBytes } from "node:crypto";
import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { agentKeyQueues, agentKeys, queueMembers, queues, users } from "@/db/schema";
import { guard, insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { AGENT_KEY_PREFIX } from "@/lib/auth/actor";
import { InvalidRequestError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { sealSecret, SECRET_PLACES } from "@/lib/auth/sealed-secrets";
import { newId, newSecret, sha256Hex } from "@/lib/ids";
import { managerOf, stillManages, stillOpen, type QueueCaller } from "@/lib/queues/queue-access";
import { managedQueueIds } from "./agent-key-access";
import { agentKeyView, type AgentKeyView } from "./agent-keys";
import { SingleLineText } from "@/lib/text/stored-text";

export const CreateAgentKeyInput = z.strictObject({
  name: SingleLineText.trim().min(1).max(100),
  /** the queue its batches go to when it names none (and no routing rule applies) */
  defaultQueue: SingleLineText.min(1),
  /** more queues it may target besides the default */
  queues: z.array(SingleLineText.min(1)).max(50).default([]),
  /** the person responsible for the agent */
  ownerEmail: z
    .email()
    .transform((e) => e.toLowerCase())
    .optional(),
});
export type CreateAgentKeyInput = z.input<typeof CreateAgentKeyInput>;

export type CreatedAgentKey = {
  agent: AgentKeyView;
  /** the secret itself: shown this once, only its hash is kept */
  key: string;
  webhookSecret: string;
};

/** The part of a secret kept to recognise it in lists (never enough to use it). */
export const agentKeyPrefix = (key: string) => key.slice(0, AGENT_KEY_PREFIX.length + 6);

/**
 * A new agent key. An admin may give it any open queues; a lead only queues they lead. Reads, then
 * one write batch: the key, its queues, and `agent.created`, with guards that the caller still
 * manages each queue and each is still open.
 */
export async function createAgentKey(caller: QueueCaller, body: unknown): Promise<CreatedAgentKey> {
  const input = parseInput(CreateAgentKeyInput, body);
  const created = await untilWritten(async () => {
    const db = getDb();
    const manager = await managerOf(db, caller);
    const led = await managedQueueIds(db, manager);
    const queueIds = [...new Set([input.defaultQueue, ...input.queues])];
    const found = await db
      .select({ id: queues.id, archivedAt: queues.archivedAt })
      .from(queues)
      .where(inArray(queues.id, queueIds));
    const usable = new Set(
      found.filter((q) => q.archivedAt === null && (!led || led.has(q.id))).map((q) => q.id),
    );
    const issues = queueIds.flatMap((id) =>
      usable.has(id)
        ? []
        : [
            {
              path:
                id === input.defaultQueue ? "defaultQueue" : `queues.${input.queues.indexOf(id)}`,
              message: "no open queue you manage has this id",
            },
          ],
    );
    if (issues.length)
      throw new InvalidRequestError(
        `Invalid request: ${issues[0]!.path}: ${issues[0]!.message}`,
        issues,
      );
    let ownerUserId: string | null = null;
    if (input.ownerEmail) {
      // A lead names an owner among the members of the queues they lead: someone outside them is
      // answered as an address with no account (issue 24), or the answer would say who has it.
      const [owner] = await db
        .select({ id: users.id })
        .from(users)
        .where(eq(users.email, input.ownerEmail));
      const [member] =
        owner && led
          ? await db
              .select({ queueId: queueMembers.queueId })
              .from(queueMembers)
              .where(
                and(eq(queueMembers.userId, owner.id), inArray(queueMembers.queueId, [...led])),
              )
              .limit(1)
          : [owner];
      if (!owner || !member)
        throw new InvalidRequestError(
          led
            ? `No member of the queues you lead has the email ${input.ownerEmail}.`
            : `No reviewer has the email ${input.ownerEmail}.`,
          [{ path: "ownerEmail", message: "unknown reviewer" }],
        );
      ownerUserId = owner.id;
    }
    const id = newId();
    const key = newSecret(AGENT_KEY_PREFIX);
    const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
    const now = Date.now();
    await commit([
      ...queueIds.flatMap((queueId) => [...stillManages(manager, queueId), stillOpen(queueId)]),
      // the owner a lead named is still a member of one of the queues they lead
      ...(led && ownerUserId
        ? [
            guard(
              `exists (select 1 from queue_members where user_id = ? and queue_id in (${[...led].map(() => "?").join(", ")}))`,
              ownerUserId,
              ...led,
            ),
          ]
        : []),
      insertRows(agentKeys, [
        {
          id,
          name: input.name,
          keyHash: sha256Hex(key),
          keyPrefix: agentKeyPrefix(key),
          defaultQueueId: input.defaultQueue,
          ownerUserId,
          // encrypted at rest when COUNTERSIGN_SECRET_KEY is set (lib/auth/sealed-secrets.ts)
          webhookSecret: sealSecret(webhookSecret, SECRET_PLACES.webhookSecret(id)),
          createdAt: now,
        },
      ]),
      insertRows(
        agentKeyQueues,
        queueIds.map((queueId) => ({ agentKeyId: id, queueId })),
      ),
      eventRows({
        type: "agent.created",
        // on no queue: reviewer streams do not carry key changes (the audit log shows them)
        queueId: null,
        actor: manager.eventActor,
        at: now,
        data: {
          agentId: id,
          name: input.name,
          keyPrefix: agentKeyPrefix(key),
          defaultQueueId: input.defaultQueue,
          queueIds,
          ownerUserId,
        },
      }),
    ]);
    return { id, key, webhookSecret };
  });
  return {
    agent: await agentKeyView(caller, created.id),
    key: created.key,
    webhookSecret: created.webhookSecret,
  };
}
