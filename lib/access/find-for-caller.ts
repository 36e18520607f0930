import { and, eq, inArray, sql, type Placeholder } from "drizzle-orm";
import type { Executor } from "@/db/client";
import {
  agentKeys,
  batches,
  calls,
  queueMembers,
  queues,
  reviewClaims,
  runs,
  type Batch,
  type Call,
  type Run,
} from "@/db/schema";
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
    .where(and(eq(batches.runId, runId), eq(batches.hiddenFromReviewers, false)));
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
      : !row.batch.hiddenFromReviewers && (await isMember(db, actor.id, [row.batch.queueId]));
  if (!visible) throw new NotFoundError("Batch");
  return row.batch;
}

/** What deciding a call needs to know besides the call: its batch, and who may decide it. */
export type DecisionTarget = {
  batch: Batch;
  separationOfDuties: boolean;
  agentOwnerId: string | null;
  agentKeyId: string;
  conversationId: string | null;
  /** the queue's claim mode, and who holds a live review claim on the batch (if anyone) */
  claimMode: "mark" | "lock";
  claimedBy: string | null;
};

/** A value of a query, or the placeholder it takes when the query is prepared (db/prepared-read.ts). */
type Param<T> = T | Placeholder;

// One query for the call or batch, its rules, and the reviewer's membership: this is the hot path.
function decisionTargetFields(reviewerId: Param<string>, now: Param<number>) {
  return {
    batch: batches,
    separationOfDuties: queues.separationOfDuties,
    agentOwnerId: agentKeys.ownerUserId,
    agentKeyId: runs.agentKeyId,
    conversationId: runs.conversationId,
    claimMode: queues.claimMode,
    claimedBy: sql<
      string | null
    >`(select ${reviewClaims.userId} from ${reviewClaims} where ${reviewClaims.batchId} = ${batches.id} and ${reviewClaims.expiresAt} > ${now})`,
    isMember: sql<number>`exists (select 1 from ${queueMembers} where ${queueMembers.queueId} = ${batches.queueId} and ${queueMembers.userId} = ${reviewerId})`,
  };
}

/** The query behind findCallForReviewer, to send in a read batch; its row goes to `callTargetOf`. */
export function callTargetQuery(
  db: Executor,
  reviewerId: Param<string>,
  callId: Param<string>,
  now: Param<number> = Date.now(),
) {
  return db
    .select({ call: calls, ...decisionTargetFields(reviewerId, now) })
    .from(calls)
    .innerJoin(batches, eq(batches.id, calls.batchId))
    .innerJoin(runs, eq(runs.id, batches.runId))
    .innerJoin(agentKeys, eq(agentKeys.id, runs.agentKeyId))
    .innerJoin(queues, eq(queues.id, batches.queueId))
    .where(eq(calls.id, callId));
}

export function callTargetOf(rows: Awaited<ReturnType<typeof callTargetQuery>>) {
  const [row] = rows;
  // A call a policy blocked is not a reviewer's to see, let alone decide.
  if (!row || !row.isMember || row.call.decisionPolicy?.blocked) throw new NotFoundError("Call");
  const { call, isMember, ...target } = row;
  return { call, target: target satisfies DecisionTarget };
}

/** A reviewer may decide only the calls of their queues. */
export async function findCallForReviewer(
  db: Executor,
  reviewer: ReviewerActor,
  callId: string,
): Promise<{ call: Call; target: DecisionTarget }> {
  return callTargetOf(await callTargetQuery(db, reviewer.id, callId));
}

/** The query behind findBatchForReviewer, to send in a read batch; its row goes to `batchTargetOf`. */
export function batchTargetQuery(
  db: Executor,
  reviewerId: Param<string>,
  batchId: Param<string>,
  now: Param<number> = Date.now(),
) {
  return db
    .select(decisionTargetFields(reviewerId, now))
    .from(batches)
    .innerJoin(runs, eq(runs.id, batches.runId))
    .innerJoin(agentKeys, eq(agentKeys.id, runs.agentKeyId))
    .innerJoin(queues, eq(queues.id, batches.queueId))
    .where(eq(batches.id, batchId));
}

export function batchTargetOf(rows: Awaited<ReturnType<typeof batchTargetQuery>>): DecisionTarget {
  const [row] = rows;
  if (!row || !row.isMember || row.batch.hiddenFromReviewers) throw new NotFoundError("Batch");
  const { isMember, ...target } = row;
  return target;
}

/**
 * The columns a reviewer's decision adds to its batch's row (oneBatchQuery in
 * lib/read-models/batch-run-views.ts), so that who may decide is read in the same statement as
 * the batch: the row already has its run's agent key, its queue's claim mode and its live claim.
 */
export function decisionTargetColumns(reviewerId: Param<string>) {
  return {
    separationOfDuties: queues.separationOfDuties,
    agentOwnerId: agentKeys.ownerUserId,
    conversationId: runs.conversationId,
    isMember: sql<number>`exists (select 1 from ${queueMembers} where ${queueMembers.queueId} = ${batches.queueId} and ${queueMembers.userId} = ${reviewerId})`,
  };
}

/** A batch's row read with decisionTargetColumns. */
type DecisionTargetRow = {
  batch: Batch;
  agentId: string;
  claimMode: "mark" | "lock";
  claimUserId: string | null;
  separationOfDuties: boolean;
  agentOwnerId: string | null;
  conversationId: string | null;
  isMember: number;
};

/**
 * Who may decide `row`'s batch, as findCallForReviewer (the call `of.call`, undefined when the
 * batch has no such call) or findBatchForReviewer (`of.call` absent) would have found it: the same
 * checks, the same `404`s.
 */
export function decisionTargetOfRow(
  row: DecisionTargetRow | undefined,
  of: { call: Call | undefined } | { batch: true },
): DecisionTarget {
  if ("call" in of) {
    if (!row || !row.isMember || !of.call || of.call.decisionPolicy?.blocked) {
      throw new NotFoundError("Call");
    }
  } else if (!row || !row.isMember || row.batch.hiddenFromReviewers) {
    throw new NotFoundError("Batch");
  }
  return {
    batch: row.batch,
    separationOfDuties: row.separationOfDuties,
    agentOwnerId: row.agentOwnerId,
    agentKeyId: row.agentId,
    conversationId: row.conversationId,
    claimMode: row.claimMode,
    claimedBy: row.claimUserId,
  };
}

/** A reviewer may decide only the batches of their queues. */
export async function findBatchForReviewer(
  db: Executor,
  reviewer: ReviewerActor,
  batchId: string,
): Promise<DecisionTarget> {
  return batchTargetOf(await batchTargetQuery(db, reviewer.id, batchId));
}
