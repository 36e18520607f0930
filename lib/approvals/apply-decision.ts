import { and, count, eq } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import {
  agentKeys,
  calls,
  queues,
  rememberedApprovals,
  runs,
  votes,
  type Batch,
  type Call,
} from "@/db/schema";
import { schemaViolations } from "@/lib/api/json-schema";
import { loadCallView } from "@/lib/api/views";
import { actorRef, type ReviewerActor } from "@/lib/auth/actor";
import { settleBatchIfDone } from "@/lib/batches/settle-batch";
import { ConflictError, ForbiddenError, InvalidRequestError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { newId } from "@/lib/ids";
import { actionHash } from "./action-hash";

export type Decision = {
  outcome: "approve" | "reject" | "edit";
  expectedRevision: number;
  reason?: string;
  editedArgs?: Record<string, unknown>;
  scope?: "once" | "run" | "conversation";
};

export function formatAgo(ms: number, now = Date.now()): string {
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86400)} d ago`;
}

/** "Approved by Dana Reviewer 4 s ago." — what a reviewer who lost the race is told. */
async function alreadyDecided(tx: Transaction, call: Call): Promise<ConflictError> {
  const current = await loadCallView(tx, call);
  const decision = current.decision;
  if (!decision || (call.status !== "approved" && call.status !== "rejected")) {
    return new ConflictError(
      "not_pending",
      `This call is ${call.status}; it can no longer be decided.`,
      current,
    );
  }
  const verb = decision.outcome === "approved" ? "Approved" : "Rejected";
  const by = decision.by ? `by ${decision.by.name}` : `by ${decision.source}`;
  return new ConflictError(
    "already_decided",
    `${verb} ${by} ${formatAgo(call.decidedAt ?? Date.now())}.`,
    current,
  );
}

/**
 * One reviewer's decision on one call, inside the caller's transaction. Every write is conditional
 * on the call still being pending at `expectedRevision`: a reviewer who lost a race, or whose tab
 * shows an older revision, gets a 409 with the call as it is now and changes nothing.
 */
export async function applyDecision(
  tx: Transaction,
  reviewer: ReviewerActor,
  call: Call,
  batch: Batch,
  decision: Decision,
): Promise<void> {
  if (call.status !== "pending" || batch.status !== "pending") throw await alreadyDecided(tx, call);
  if (batch.expiresAt <= Date.now()) {
    // Fail closed: past the deadline only onTimeout settles the batch, swept or not yet.
    throw new ConflictError(
      "not_pending",
      "This batch passed its deadline; it is settled by its onTimeout rule, not by a reviewer.",
      await loadCallView(tx, call),
    );
  }
  if (call.revision !== decision.expectedRevision) {
    throw new ConflictError(
      "stale_revision",
      `This call is at revision ${call.revision}; you reviewed revision ${decision.expectedRevision}. Review the current version.`,
      await loadCallView(tx, call),
    );
  }
  await assertMayDecide(tx, reviewer, batch);

  const now = Date.now();
  const base = {
    runId: batch.runId,
    batchId: batch.id,
    callId: call.id,
    queueId: batch.queueId,
    actor: actorRef(reviewer),
    at: now,
  };
  const decide = async (fields: Partial<Call>) => {
    const [updated] = await tx
      .update(calls)
      .set(fields)
      .where(
        and(eq(calls.id, call.id), eq(calls.status, "pending"), eq(calls.revision, call.revision)),
      )
      .returning();
    if (!updated) throw await alreadyDecided(tx, call);
    return updated;
  };

  if (decision.outcome === "reject") {
    await decide({
      status: "rejected",
      decisionOutcome: "rejected",
      decisionSource: "reviewer",
      decidedBy: reviewer.id,
      decidedAt: now,
      decisionReason: decision.reason ?? null,
    });
    await castVote(tx, reviewer, call, call.revision, call.actionHash, "rejected", now);
    await appendEvent(tx, {
      ...base,
      type: "call.decided",
      data: {
        outcome: "rejected",
        source: "reviewer",
        reason: decision.reason ?? null,
        revision: call.revision,
      },
    });
    await settleBatchIfDone(tx, batch.id, actorRef(reviewer));
    return;
  }

  // Each vote is tied to the exact action it approves: the agent's args, or a reviewer's edit.
  let revision = call.revision;
  let hash = call.editedArgs == null ? call.actionHash : actionHash(call.toolName, call.editedArgs);
  if (decision.outcome === "edit") {
    const editedArgs = checkedEdit(call, decision.editedArgs);
    revision = call.revision + 1;
    hash = actionHash(call.toolName, editedArgs);
    // An edit is a new revision: approvals of the old args no longer count toward the quorum.
    await decide({ revision, editedArgs });
    await appendEvent(tx, { ...base, type: "call.edited", data: { revision, editedArgs } });
  }

  await castVote(tx, reviewer, call, revision, hash, "approved", now);
  const approvals = await approvalsAt(tx, call.id, revision);
  await appendEvent(tx, {
    ...base,
    type: "call.voted",
    data: { outcome: "approved", revision, approvals, requiredApprovals: call.requiredApprovals },
  });
  if (approvals < call.requiredApprovals) {
    // Still waiting for others; the vote itself is the change, guarded by the same condition.
    if (decision.outcome === "approve") await decide({ revision });
    return;
  }

  const decided = await tx
    .update(calls)
    .set({
      status: "approved",
      decisionOutcome: "approved",
      decisionSource: "reviewer",
      decidedBy: reviewer.id,
      decidedAt: now,
      decisionReason: decision.reason ?? null,
      decisionScope: decision.scope ?? "once",
    })
    .where(and(eq(calls.id, call.id), eq(calls.status, "pending"), eq(calls.revision, revision)))
    .returning();
  if (decided.length === 0) throw await alreadyDecided(tx, call);
  await remember(tx, reviewer, call, batch.queueId, hash, decision.scope, now);
  await appendEvent(tx, {
    ...base,
    type: "call.decided",
    data: {
      outcome: "approved",
      source: "reviewer",
      reason: decision.reason ?? null,
      revision,
      scope: decision.scope ?? "once",
      edited: decision.outcome === "edit",
    },
  });
  await settleBatchIfDone(tx, batch.id, actorRef(reviewer));
}

function checkedEdit(call: Call, editedArgs: Record<string, unknown> | undefined) {
  if (editedArgs === undefined) {
    throw new InvalidRequestError("An edit needs editedArgs.", [
      { path: "editedArgs", message: "required when outcome is edit" },
    ]);
  }
  const violations = call.inputSchema ? schemaViolations(call.inputSchema, editedArgs) : [];
  if (violations.length > 0) {
    throw new InvalidRequestError(
      `editedArgs do not match the tool's input schema: ${violations[0]!.path} ${violations[0]!.message}`,
      violations.map((v) => ({ path: `editedArgs.${v.path}`, message: v.message })),
    );
  }
  return editedArgs;
}

/** With separation of duties, whoever owns the agent key may not decide its requests. */
async function assertMayDecide(tx: Transaction, reviewer: ReviewerActor, batch: Batch) {
  const [row] = await tx
    .select({ separationOfDuties: queues.separationOfDuties, ownerUserId: agentKeys.ownerUserId })
    .from(runs)
    .innerJoin(agentKeys, eq(agentKeys.id, runs.agentKeyId))
    .innerJoin(queues, eq(queues.id, batch.queueId))
    .where(eq(runs.id, batch.runId));
  if (row?.separationOfDuties && row.ownerUserId === reviewer.id) {
    throw new ForbiddenError(
      "Separation of duties: you own this agent, so someone else must decide its requests.",
    );
  }
}

async function castVote(
  tx: Transaction,
  reviewer: ReviewerActor,
  call: Call,
  revision: number,
  hash: string,
  outcome: "approved" | "rejected",
  now: number,
) {
  const inserted = await tx
    .insert(votes)
    .values({
      id: newId(),
      callId: call.id,
      reviewerId: reviewer.id,
      outcome,
      revision,
      actionHash: hash,
      createdAt: now,
    })
    .onConflictDoNothing()
    .returning({ id: votes.id });
  if (inserted.length === 0) {
    throw new ConflictError(
      "already_decided",
      `You already voted on revision ${revision}; it needs approvals from other reviewers.`,
      await loadCallView(tx, call),
    );
  }
}

async function approvalsAt(tx: Transaction, callId: string, revision: number): Promise<number> {
  const [row] = await tx
    .select({ n: count() })
    .from(votes)
    .where(
      and(eq(votes.callId, callId), eq(votes.revision, revision), eq(votes.outcome, "approved")),
    );
  return row?.n ?? 0;
}

async function remember(
  tx: Transaction,
  reviewer: ReviewerActor,
  call: Call,
  queueId: string,
  hash: string,
  scope: Decision["scope"],
  now: number,
) {
  if (scope !== "run" && scope !== "conversation") return;
  const [run] = await tx.select().from(runs).where(eq(runs.id, call.runId));
  const scopeKey = scope === "run" ? run!.id : run!.conversationId;
  if (!scopeKey) {
    throw new InvalidRequestError(
      "This run has no conversationId, so an approval cannot be remembered for its conversation.",
      [{ path: "scope", message: "the run has no conversationId" }],
    );
  }
  await tx.insert(rememberedApprovals).values({
    id: newId(),
    scope,
    scopeKey,
    agentKeyId: run!.agentKeyId,
    queueId,
    actionHash: hash,
    callId: call.id,
    approvedBy: reviewer.id,
    createdAt: now,
  });
}
