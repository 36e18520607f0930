import type { ReviewerActor } from "@/lib/auth/actor";
import { decisionTargetOfRow } from "@/lib/access/find-for-caller";
import { pausedBatchGuard, takePausedBatch, type PausedBatch } from "@/lib/batches/paused-batches";
import { untilWrittenRecalling } from "@/lib/events/commit";
import { readDecisionState, type DecisionState } from "./plan-decision";

/**
 * Runs a decision (`decide`: plan on the state, then one write batch) until it is written, as
 * `untilWritten` does. The first decision on a batch this process paused plans from the batch as
 * the pause left it: no read. Anything but the write its guard allows — a refusal, or the guard
 * finding the batch moved — is answered only from a read, on the next try.
 */
export function untilDecided<T>(
  reviewer: ReviewerActor,
  of: { callId: string } | { batchId: string },
  decide: (state: DecisionState) => Promise<T>,
): Promise<T> {
  return untilWrittenRecalling(
    () => takePausedBatch(of),
    async (paused) =>
      decide(
        paused
          ? decisionStateFromPause(reviewer, paused, of)
          : await readDecisionState(reviewer, of),
      ),
  );
}

/**
 * A reviewer's decision planned from the batch as its pause left it (lib/batches/paused-batches.ts),
 * instead of readDecisionState's read: the same state, and a write batch that starts with the
 * guard that it still is. Membership is not known here: it is taken as given, and the write's own
 * conditions (plan-decision.ts, `stillOpen`) abort for a reviewer outside the queue, whose
 * decision is then planned from a read and answered 404 as always.
 */
export function decisionStateFromPause(
  reviewer: ReviewerActor,
  paused: PausedBatch,
  of: { callId: string } | { batchId: string },
): DecisionState {
  const { rows } = paused;
  // copies of what planning edits (the batch's row, each call's row, the votes), not the held rows
  const batchRows = rows.batchRows.map((row) => ({ ...row }));
  const callRows = rows.callRows.map((row) => ({ ...row }));
  const target = decisionTargetOfRow(
    {
      ...batchRows[0]!,
      separationOfDuties: paused.separationOfDuties,
      agentOwnerId: paused.agentOwnerId,
      conversationId: paused.conversationId,
      isMember: 1,
    },
    "callId" in of
      ? { call: callRows.find((row) => row.call.id === of.callId)?.call }
      : { batch: true },
  );
  return {
    reviewer,
    target,
    rows: { batchRows, callRows, voteRows: [...rows.voteRows] },
    now: Date.now(),
    writes: [pausedBatchGuard(paused)],
  };
}
