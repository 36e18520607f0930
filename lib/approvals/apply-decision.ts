import { and, count, eq } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { calls, rememberedApprovals, votes, type Call } from "@/db/schema";
import type { DecisionTarget } from "@/lib/api/access";
import { schemaViolations } from "@/lib/api/json-schema";
import { loadCallView, type BatchView } from "@/lib/api/views";
import { actorRef, type ReviewerActor } from "@/lib/auth/actor";
import { settleBatchIfDone } from "@/lib/batches/settle-batch";
import { guardClaimedDecision } from "@/lib/claims/claim-guard";
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
 * Returns the batch's view when this decision settled the whole batch, else null.
 */
export async function applyDecision(
  tx: Transaction,
  reviewer: ReviewerActor,
  call: Call,
  target: DecisionTarget,
  decision: Decision,
): Promise<BatchView | null> {
  const { batch } = target;
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
  if (target.separationOfDuties && target.agentOwnerId === reviewer.id) {
    throw new ForbiddenError(
      "Separation of duties: you own this agent, so someone else must decide its requests.",
    );
  }
  await guardClaimedDecision(tx, reviewer, target);

  const now = Date.now();
  const base = {
    runId: batch.runId,
    batchId: batch.id,
    callId: call.id,
    queueId: batch.queueId,
    actor: actorRef(reviewer),
    at: now,
  };
  // The compare-and-swap: only a pending call still at the revision this write expects.
  const update = async (atRevision: number, fields: Partial<Call>) => {
    const [updated] = await tx
      .update(calls)
      .set(fields)
      .where(
        and(eq(calls.id, call.id), eq(calls.status, "pending"), eq(calls.revision, atRevision)),
      )
      .returning({ id: calls.id });
    if (!updated) throw await alreadyDecided(tx, call);
  };
  const decided = (outcome: "approved" | "rejected") => ({
    status: outcome,
    decisionOutcome: outcome,
    decisionSource: "reviewer" as const,
    decidedBy: reviewer.id,
    decidedAt: now,
    decisionReason: decision.reason ?? null,
  });

  if (decision.outcome === "reject") {
    // One rejection rejects, whatever the quorum.
    await update(call.revision, decided("rejected"));
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
    return settleBatchIfDone(tx, batch.id, actorRef(reviewer));
  }

  // Each vote is tied to the exact action it approves: the agent's args, or a reviewer's edit.
  let revision = call.revision;
  let hash = call.editedArgs == null ? call.actionHash : actionHash(call.toolName, call.editedArgs);
  if (decision.outcome === "edit") {
    const editedArgs = checkedEdit(call, decision.editedArgs);
    revision = call.revision + 1;
    hash = actionHash(call.toolName, editedArgs);
    // An edit is a new revision: approvals of the old args no longer count toward the quorum.
    await update(call.revision, { revision, editedArgs });
    await appendEvent(tx, { ...base, type: "call.edited", data: { revision, editedArgs } });
  }

  await castVote(tx, reviewer, call, revision, hash, "approved", now);
  const approvals = call.requiredApprovals === 1 ? 1 : await approvalsAt(tx, call.id, revision);
  if (approvals < call.requiredApprovals) {
    // Still waiting for others; the vote is the change, guarded by the same condition.
    if (decision.outcome === "approve") await update(revision, { revision });
    await appendEvent(tx, {
      ...base,
      type: "call.voted",
      data: { outcome: "approved", revision, approvals, requiredApprovals: call.requiredApprovals },
    });
    return null;
  }

  await update(revision, { ...decided("approved"), decisionScope: decision.scope ?? "once" });
  await remember(tx, reviewer, call, target, hash, decision.scope, now);
  await appendEvent(tx, {
    ...base,
    type: "call.decided",
    data: {
      outcome: "approved",
      source: "reviewer",
      reason: decision.reason ?? null,
      revision,
      approvals,
      requiredApprovals: call.requiredApprovals,
      scope: decision.scope ?? "once",
      edited: decision.outcome === "edit",
    },
  });
  return settleBatchIfDone(tx, batch.id, actorRef(reviewer));
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
  target: DecisionTarget,
  hash: string,
  scope: Decision["scope"],
  now: number,
) {
  if (scope !== "run" && scope !== "conversation") return;
  const scopeKey = scope === "run" ? call.runId : target.conversationId;
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
    agentKeyId: target.agentKeyId,
    queueId: target.batch.queueId,
    actionHash: hash,
    callId: call.id,
    approvedBy: reviewer.id,
    createdAt: now,
  });
}
