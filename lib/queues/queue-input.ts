import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "@/db/client";
import { queues } from "@/db/schema";
import { InvalidRequestError } from "@/lib/errors";
import { findQueueFor, type Manager } from "./queue-access";
import { SingleLineText } from "@/lib/text/stored-text";

// The settings fields that creating and editing a queue share, and their cross-row checks.

export const QueueName = SingleLineText.trim().min(1).max(100);
export const RequiredApprovals = z.int().min(1).max(20);
export const DefaultTimeoutSecs = z
  .int()
  .min(1)
  .max(30 * 24 * 3600);
export const EscalationQueueId = SingleLineText.min(1).max(200).nullable();
/** the Slack channel its cards are posted to (a channel id such as C0123ABCD); null: none */
export const SlackChannelId = z
  .string()
  .trim()
  .regex(/^[CGD][A-Z0-9]{2,40}$/, "a Slack channel id, such as C0123ABCD (not the channel's name)")
  .nullable();
/** lock: while a reviewer's claim lasts only they may decide the batch; mark: the claim only shows */
export const ClaimMode = z.enum(["mark", "lock"]);
/** whether agents may ask for onTimeout "approve" here (lib/batches/timeout-approval.ts) */
export const ApproveOnTimeout = z.boolean();
/** the shortest deadline a batch that approves on timeout may have */
export const ApproveOnTimeoutMinSecs = z
  .int()
  .min(1)
  .max(30 * 24 * 3600);

/**
 * An escalation target must be another open queue the caller can see: pointing at a queue id
 * they could not otherwise see would let them probe other teams' ids.
 */
export async function checkEscalationTarget(
  db: Executor,
  manager: Manager,
  queueId: string | null,
  escalationQueueId: string,
): Promise<void> {
  const refuse = (message: string) => {
    throw new InvalidRequestError(`Invalid request: escalationQueueId: ${message}`, [
      { path: "escalationQueueId", message },
    ]);
  };
  if (escalationQueueId === queueId) refuse("a queue cannot escalate to itself");
  const target = await findQueueFor(db, manager, escalationQueueId).catch(() => null);
  if (!target) refuse("no such queue");
  if (target!.queue.archivedAt !== null) refuse(`queue '${target!.queue.name}' is archived`);
}

/** 409 when another queue has the name already (the unique index would refuse it anyway). */
export async function nameTakenBy(
  db: Executor,
  name: string,
): Promise<{ id: string; name: string } | null> {
  const [row] = await db
    .select({ id: queues.id, name: queues.name })
    .from(queues)
    .where(eq(queues.name, name));
  return row ?? null;
}
