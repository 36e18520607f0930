import { and, eq, inArray } from "drizzle-orm";
import type { Executor } from "@/db/client";
import { batches, calls, queueMembers, runs, type Batch, type Call, type Run } from "@/db/schema";
import type { Actor, ReviewerActor } from "@/lib/auth/actor";
import { NotFoundError } from "@/lib/errors";

// Scoped fetch-or-throw loaders: a row the caller may not see is reported exactly like a missing
// one, so ids cannot be probed across tenants.

async function isMember(db: Executor, userId: string, queueIds: string[]): Promise<boolean> {
  if (queueIds.length === 0) return false;
  const [row] = await db
    .select({ queueId: queueMembers.queueId })
    .from(queueMembers)
    .where(and(eq(queueMembers.userId, userId), inArray(queueMembers.queueId, queueIds)))
    .limit(1);
  return row !== undefined;
}

/** An agent sees its own runs; a reviewer sees runs with a batch (or home) in one of their queues. */
export async function findRunFor(db: Executor, actor: Actor, runId: string): Promise<Run> {
  const [run] = await db.select().from(runs).where(eq(runs.id, runId));
  if (!run) throw new NotFoundError("Run");
  if (actor.kind === "agent") {
    if (run.agentKeyId !== actor.id) throw new NotFoundError("Run");
    return run;
  }
  const batchQueues = await db
    .selectDistinct({ queueId: batches.queueId })
    .from(batches)
    .where(eq(batches.runId, runId));
  const queueIds = [run.queueId, ...batchQueues.map((b) => b.queueId)];
  if (!(await isMember(db, actor.id, queueIds))) throw new NotFoundError("Run");
  return run;
}

/** An agent sees the batches of its runs; a reviewer sees the batches of their queues. */
export async function findBatchFor(db: Executor, actor: Actor, batchId: string): Promise<Batch> {
  const [row] = await db
    .select({ batch: batches, agentKeyId: runs.agentKeyId })
    .from(batches)
    .innerJoin(runs, eq(runs.id, batches.runId))
    .where(eq(batches.id, batchId));
  if (!row) throw new NotFoundError("Batch");
  const visible =
    actor.kind === "agent"
      ? row.agentKeyId === actor.id
      : await isMember(db, actor.id, [row.batch.queueId]);
  if (!visible) throw new NotFoundError("Batch");
  return row.batch;
}

/** A reviewer may decide only the calls of their queues. */
export async function findCallForReviewer(
  db: Executor,
  reviewer: ReviewerActor,
  callId: string,
): Promise<{ call: Call; batch: Batch }> {
  const [row] = await db
    .select({ call: calls, batch: batches })
    .from(calls)
    .innerJoin(batches, eq(batches.id, calls.batchId))
    .where(eq(calls.id, callId));
  if (!row || !(await isMember(db, reviewer.id, [row.batch.queueId]))) {
    throw new NotFoundError("Call");
  }
  return row;
}
