import { z } from "zod";
import { parseInput } from "@/lib/input/parse";
import { forReviewers, type BatchView } from "@/lib/read-models/batch-run-views";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { settlementOf } from "@/lib/batches/settle-batch";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { commit } from "@/lib/events/commit";
import { batchViewOf, planDecision } from "./plan-decision";
import { untilDecided } from "./paused-decision";
import { MultiLineText } from "@/lib/text/stored-text";

export const DecideBatchInput = z.object({
  outcome: z.enum(["approve", "reject"]),
  /** the revision the reviewer saw of every call of the batch */
  expectedRevisions: z.record(z.string(), z.int().min(1)),
  reason: MultiLineText.max(4000).optional(),
});
export type DecideBatchInput = z.infer<typeof DecideBatchInput>;

/** Approves or rejects every call of a batch at once: all of them, or (on any conflict) none. */
export async function decideBatch(
  actor: Actor,
  batchId: string,
  body: unknown,
): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(DecideBatchInput, body);
  return untilDecided(reviewer, { batchId }, async (state) => {
    const before = batchViewOf(state);
    assertNamesEveryCall(
      state.rows.callRows.map((r) => r.call.id),
      Object.keys(input.expectedRevisions),
    );
    // Every call in one write batch: all of them are decided, or (on any conflict) none.
    for (const { call } of [...state.rows.callRows]) {
      try {
        planDecision(state, call.id, {
          outcome: input.outcome,
          expectedRevision: input.expectedRevisions[call.id]!,
          reason: input.reason,
        });
      } catch (error) {
        if (!(error instanceof ConflictError)) throw error;
        throw new ConflictError(
          error.code as ConstructorParameters<typeof ConflictError>[0],
          `Nothing was decided: ${error.message}`,
          before,
          { callId: call.id },
        );
      }
    }
    const settlement = settlementOf(state.rows, actorRef(reviewer), state.now);
    await commit([...state.writes, ...settlement.writes]);
    // a batch this decision settled: the view its event carries, as reviewers see it
    return settlement.agentView ? forReviewers(settlement.agentView) : batchViewOf(state);
  });
}

function assertNamesEveryCall(callIds: string[], listed: string[]) {
  const missing = callIds.filter((id) => !listed.includes(id));
  const unknown = listed.filter((id) => !callIds.includes(id));
  if (missing.length === 0 && unknown.length === 0) return;
  throw new InvalidRequestError(
    "expectedRevisions must name every call of the batch, and only those.",
    [
      ...missing.map((id) => ({ path: `expectedRevisions.${id}`, message: "missing" })),
      ...unknown.map((id) => ({
        path: `expectedRevisions.${id}`,
        message: "not a call of this batch",
      })),
    ],
  );
}
