import { z } from "zod";
import type { InValue } from "@libsql/client";
import { sql, type Placeholder, type SQL } from "drizzle-orm";
import { calls, rememberedApprovals, votes, type Call } from "@/db/schema";
import type { Database } from "@/db/client";
import { preparedRead, readTogether } from "@/db/prepared-read";
import {
  changedRow,
  guard,
  insertRows,
  PREVIOUS_CHANGED,
  statement,
  updateRow,
  type Statement,
} from "@/db/write-batch";
import {
  decisionTargetColumns,
  decisionTargetOfRow,
  type DecisionTarget,
} from "@/lib/access/find-for-caller";
import { schemaViolations } from "@/lib/input/json-schema";
import { parseInput } from "@/lib/input/parse";
import { MultiLineText } from "@/lib/text/stored-text";
import { formatAgo } from "@/lib/time/format";
import {
  assembleBatchViews,
  oneBatchQuery,
  oneBatchRows,
  type BatchView,
  type BatchViewRows,
  type CallView,
} from "@/lib/read-models/batch-run-views";
import { actorRef, type ReviewerActor } from "@/lib/auth/actor";
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { isoTime, newId } from "@/lib/ids";
import { actionHash } from "@/lib/batches/action-hash";

export type Decision = {
  outcome: "approve" | "reject" | "edit";
  expectedRevision: number;
  reason?: string;
  editedArgs?: Record<string, unknown>;
  scope?: "once" | "run" | "conversation";
};

/** A batch as a reviewer's decision found it: read before anything is written, then edited by
 * each planned decision so that the views and the writes that follow see its effect. */
export type DecisionState = {
  reviewer: ReviewerActor;
  target: DecisionTarget;
  /** the batch, every call of it and their votes */
  rows: BatchViewRows;
  now: number;
  /** the write batch being built (db/write-batch.ts) */
  writes: Statement[];
};

/**
 * Reads what a reviewer's decision needs, in one statement (one round trip, one snapshot, no read
 * transaction around it): the batch's row with who may decide it (decisionTargetColumns), each of
 * its calls, and their votes (oneBatchQuery). A call or batch outside the reviewer's queues is
 * reported as missing.
 */
export async function readDecisionState(
  reviewer: ReviewerActor,
  of: { callId: string } | { batchId: string },
): Promise<DecisionState> {
  const now = Date.now();
  const byCall = "callId" in of;
  const [rows] = byCall
    ? await readTogether([readByCall()], { reviewerId: reviewer.id, callId: of.callId, now })
    : await readTogether([readByBatch()], { reviewerId: reviewer.id, batchId: of.batchId, now });
  const { batchRows, callRows, voteRows } = oneBatchRows(rows);
  const target = decisionTargetOfRow(
    batchRows[0],
    byCall ? { call: callRows.find((r) => r.call.id === of.callId)?.call } : { batch: true },
  );
  return { reviewer, target, rows: { batchRows, callRows, voteRows }, now, writes: [] };
}

// The read of a decision, prepared once (db/prepared-read.ts): the batch with who may decide it,
// its calls and their votes.
const readByCall = preparedRead((db) => {
  const callId = sql.placeholder("callId");
  const batchOfCall = sql`(select ${calls.batchId} from ${calls} where ${calls.id} = ${callId})`;
  return prepareRead(db, batchOfCall);
});
const readByBatch = preparedRead((db) => prepareRead(db, sql.placeholder("batchId")));

function prepareRead(db: Database, batch: SQL | Placeholder) {
  return oneBatchQuery(
    db,
    batch,
    sql.placeholder("now"),
    decisionTargetColumns(sql.placeholder("reviewerId")),
  ).prepare();
}

/** The batch as reviewers see it in `state` (after the decisions planned so far). */
export function batchViewOf(state: DecisionState): BatchView {
  return assembleBatchViews(state.rows, [state.target.batch.id])[0]!;
}

function callViewOf(state: DecisionState, callId: string): CallView {
  return batchViewOf(state).calls.find((c) => c.id === callId)!;
}

/** "Approved by Dana Reviewer 4 s ago." — what a reviewer who lost the race is told. */
function alreadyDecided(state: DecisionState, call: Call): ConflictError {
  const current = callViewOf(state, call.id);
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
    `${verb} ${by} ${formatAgo(call.decidedAt ?? Date.now(), Date.now())}.`,
    current,
  );
}

/**
 * Plans one reviewer's decision on one call of `state`: checks it against the state as read
 * (a reviewer who lost a race, or whose tab shows an older revision, gets a 409 with the call as
 * it is now), adds its writes to `state.writes` and edits `state.rows` to show it. Every write is
 * conditional on what the plan relied on — the call still pending at the revision reviewed, its
 * batch still open and in a queue of the reviewer, no one else's lock claim, the votes counted —
 * and aborts the whole batch otherwise (db/write-batch.ts), so a stale plan writes nothing.
 * Settling the batch afterwards is planSettlement's.
 */
export function planDecision(state: DecisionState, callId: string, decision: Decision): void {
  const from = state.writes.length;
  planDecisionWrites(state, callId, decision);
  checkVotesChecked(state.writes.slice(from));
}

const VOTE_INSERT = `insert into "votes"`;

/**
 * castVote's INSERT is followed at once by a statement that requires PREVIOUS_CHANGED: that is
 * what aborts a vote that was a no-op. Any write pushed between the two would make that check
 * read the count of the write instead, and a lost vote would pass silently: refused here, at
 * planning time, where every test of a decision meets it.
 */
export function checkVotesChecked(writes: Statement[]): void {
  writes.forEach((write, i) => {
    if (write.sql.startsWith(VOTE_INSERT) && !writes[i + 1]?.sql.includes(PREVIOUS_CHANGED))
      throw new Error("A vote's INSERT must be followed by the statement that checks it inserted");
  });
}

function planDecisionWrites(state: DecisionState, callId: string, decision: Decision): void {
  const { reviewer, target, now, writes } = state;
  const batchRow = state.rows.batchRows[0]!;
  const batch = batchRow.batch;
  const callRow = state.rows.callRows.find((r) => r.call.id === callId);
  if (!callRow) throw new NotFoundError("Call");
  const call = callRow.call;
  if (call.status !== "pending" || batch.status !== "pending") throw alreadyDecided(state, call);
  if (batch.expiresAt <= now) {
    // Fail closed: past the deadline only onTimeout settles the batch, swept or not yet.
    throw new ConflictError(
      "not_pending",
      "This batch passed its deadline; it is settled by its onTimeout rule, not by a reviewer.",
      callViewOf(state, call.id),
    );
  }
  if (call.revision !== decision.expectedRevision) {
    throw new ConflictError(
      "stale_revision",
      `This call is at revision ${call.revision}; you reviewed revision ${decision.expectedRevision}. Review the current version.`,
      callViewOf(state, call.id),
    );
  }
  if (target.separationOfDuties && target.agentOwnerId === reviewer.id) {
    throw new ForbiddenError(
      "Separation of duties: you own this agent, so someone else must decide its requests.",
    );
  }
  const lockMode = target.claimMode === "lock";
  if (batchRow.claimUserId !== null && batchRow.claimExpiresAt !== null) {
    if (batchRow.claimUserId === reviewer.id) {
      // A decision by the claimant ends the claim, so no card stays marked "reviewing".
      writes.push(
        statement(
          "delete from review_claims where batch_id = ? and user_id = ?",
          batch.id,
          reviewer.id,
        ),
      );
      state.rows.batchRows[0] = { ...batchRow, claimUserId: null, claimExpiresAt: null };
    } else if (lockMode) {
      const holder = { id: batchRow.claimUserId, name: batchRow.claimantName ?? "unknown" };
      throw new ConflictError(
        "claimed_by_other",
        `${holder.name} is reviewing this card until ${isoTime(batchRow.claimExpiresAt)}; this queue lets only them decide it meanwhile.`,
        batchViewOf(state),
        { holder, expiresAt: isoTime(batchRow.claimExpiresAt) },
      );
    }
  }

  // The compare-and-swap condition of every write to the call. Right after this reviewer's vote
  // it also requires the vote to have been inserted (PREVIOUS_CHANGED): see castVote.
  const stillOpen = (revision: number, afterVote = false) => ({
    sql:
      (afterVote ? `${PREVIOUS_CHANGED} and ` : "") +
      "id = ? and status = 'pending' and revision = ?" +
      " and exists (select 1 from batches b join queue_members m on m.queue_id = b.queue_id" +
      " where b.id = ? and b.status = 'pending' and b.expires_at > ? and m.user_id = ?)" +
      (lockMode
        ? " and not exists (select 1 from review_claims c where c.batch_id = ? and c.user_id <> ? and c.expires_at > ?)"
        : ""),
    args: [
      call.id,
      revision,
      batch.id,
      now,
      reviewer.id,
      ...(lockMode ? [batch.id, reviewer.id, now] : []),
    ],
  });
  const update = (
    revision: number,
    fields: Partial<Call>,
    afterVote: boolean,
    extra = "",
    ...extraArgs: InValue[]
  ) => {
    const condition = stillOpen(revision, afterVote);
    writes.push(
      updateRow(calls, fields, condition.sql + extra, ...condition.args, ...extraArgs),
      changedRow(),
    );
    callRow.call = { ...callRow.call, ...fields };
  };
  const base = {
    runId: batch.runId,
    batchId: batch.id,
    callId: call.id,
    queueId: batch.queueId,
    actor: actorRef(reviewer),
    at: now,
  };
  const decided = (outcome: "approved" | "rejected") => ({
    status: outcome,
    decisionOutcome: outcome,
    decisionSource: "reviewer" as const,
    decidedBy: reviewer.id,
    // recorded as they are now, so a later rename does not rewrite this decision (finding 3)
    decidedByName: reviewer.name,
    decidedByEmail: reviewer.email,
    decidedAt: now,
    decisionReason: decision.reason ?? null,
  });
  const castVote = (revision: number, hash: string, outcome: "approved" | "rejected") => {
    if (
      state.rows.voteRows.some(
        (r) =>
          r.vote.callId === call.id &&
          r.vote.reviewerId === reviewer.id &&
          r.vote.revision === revision,
      )
    ) {
      throw new ConflictError(
        "already_decided",
        `You already voted on revision ${revision}; it needs approvals from other reviewers.`,
        callViewOf(state, call.id),
      );
    }
    const vote = {
      id: newId(),
      callId: call.id,
      reviewerId: reviewer.id,
      outcome,
      revision,
      actionHash: hash,
      reviewerName: reviewer.name,
      reviewerEmail: reviewer.email,
      createdAt: now,
    };
    // A vote of this reviewer cast meanwhile (another tab) makes this insert a no-op. The statement
    // that follows it in every branch below (the call's update, or the quorum's guard) requires
    // PREVIOUS_CHANGED, so that no-op aborts the batch as a changedRow() here would, one fewer.
    writes.push(insertRows(votes, [vote], " on conflict do nothing"));
    state.rows.voteRows.push({ vote, reviewerName: reviewer.name });
  };
  const approvalsAt = (revision: number) =>
    state.rows.voteRows.filter(
      (r) =>
        r.vote.callId === call.id && r.vote.revision === revision && r.vote.outcome === "approved",
    ).length;
  // The votes counted must be the votes there are when the batch runs.
  const quorumCondition =
    " and (select count(*) from votes where call_id = ? and revision = ? and outcome = 'approved') = ?";

  if (decision.outcome === "reject") {
    // One rejection rejects, whatever the quorum.
    castVote(call.revision, call.actionHash, "rejected");
    update(call.revision, decided("rejected"), true);
    callRow.deciderName = reviewer.name;
    writes.push(
      eventRows({
        ...base,
        type: "call.decided",
        data: {
          outcome: "rejected",
          source: "reviewer",
          reason: decision.reason ?? null,
          revision: call.revision,
        },
      }),
    );
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
    update(call.revision, { revision, editedArgs }, false);
    writes.push(eventRows({ ...base, type: "call.edited", data: { revision, editedArgs } }));
  }

  castVote(revision, hash, "approved");
  const approvals = approvalsAt(revision);
  if (approvals < call.requiredApprovals) {
    // Still waiting for others; the vote is the change, guarded by the same conditions.
    const condition = stillOpen(revision, true);
    writes.push(
      guard(
        `exists (select 1 from calls where ${condition.sql}${quorumCondition})`,
        ...condition.args,
        call.id,
        revision,
        approvals,
      ),
      eventRows({
        ...base,
        type: "call.voted",
        data: {
          outcome: "approved",
          revision,
          approvals,
          requiredApprovals: call.requiredApprovals,
        },
      }),
    );
    return;
  }

  update(
    revision,
    { ...decided("approved"), decisionScope: decision.scope ?? "once" },
    true,
    quorumCondition,
    call.id,
    revision,
    approvals,
  );
  callRow.deciderName = reviewer.name;
  remember(state, call, hash, decision.scope);
  writes.push(
    eventRows({
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
    }),
  );
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
  // A plan's edited summary becomes the plan's text (open-batch.ts planAsCall): held to the rules
  // of the agent's own summary, not left as data (lib/text/stored-text.ts).
  if (call.toolCallId === "plan" && call.toolName === "plan")
    parseInput(EditedPlanSummary, { editedArgs });
  return editedArgs;
}

const EditedPlanSummary = z.object({
  editedArgs: z.object({ summary: MultiLineText.optional() }).passthrough(),
});

function remember(state: DecisionState, call: Call, hash: string, scope: Decision["scope"]) {
  if (scope !== "run" && scope !== "conversation") return;
  const { target } = state;
  const scopeKey = scope === "run" ? call.runId : target.conversationId;
  if (!scopeKey) {
    throw new InvalidRequestError(
      "This run has no conversationId, so an approval cannot be remembered for its conversation.",
      [{ path: "scope", message: "the run has no conversationId" }],
    );
  }
  state.writes.push(
    insertRows(rememberedApprovals, [
      {
        id: newId(),
        scope,
        scopeKey,
        agentKeyId: target.agentKeyId,
        queueId: target.batch.queueId,
        actionHash: hash,
        callId: call.id,
        approvedBy: state.reviewer.id,
        createdAt: state.now,
      },
    ]),
  );
}
