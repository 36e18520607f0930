import { z } from "zod";
import { parseInput } from "@/lib/input/parse";
import { forReviewers, type BatchView, type CallView } from "@/lib/read-models/batch-run-views";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { settlementOf } from "@/lib/batches/settle-batch";
import { commit } from "@/lib/events/commit";
import { batchViewOf, planDecision } from "./plan-decision";
import { untilDecided } from "./paused-decision";
import { MultiLineText } from "@/lib/text/stored-text";

export const DecideCallInput = z
  .object({
    outcome: z.enum(["approve", "reject", "edit"]),
    expectedRevision: z.int().min(1),
    reason: MultiLineText.max(4000).optional(),
    editedArgs: z.record(z.string(), z.unknown()).optional(),
    scope: z.enum(["once", "run", "conversation"]).optional(),
  })
  .refine((d) => d.outcome === "edit" || d.editedArgs === undefined, {
    path: ["editedArgs"],
    message: "editedArgs are only for outcome edit",
  })
  .refine((d) => d.outcome !== "edit" || d.editedArgs !== undefined, {
    path: ["editedArgs"],
    message: "required when outcome is edit",
  })
  .refine((d) => d.outcome !== "reject" || d.scope === undefined || d.scope === "once", {
    path: ["scope"],
    message: "only approvals can be remembered",
  });
export type DecideCallInput = z.infer<typeof DecideCallInput>;

/**
 * A reviewer approves, rejects or edits one call at the revision they reviewed: one read (one
 * statement: readDecisionState; none for the first decision on a batch this process paused), then
 * one write batch (db/write-batch.ts) that settles the batch too when this was its last call.
 */
export async function decideCall(
  actor: Actor,
  callId: string,
  body: unknown,
): Promise<{ call: CallView; batch: BatchView }> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(DecideCallInput, body);
  return untilDecided(reviewer, { callId }, async (state) => {
    planDecision(state, callId, input);
    const settlement = settlementOf(state.rows, actorRef(reviewer), state.now);
    await commit([...state.writes, ...settlement.writes]);
    // a batch this decision settled: the view its event carries, as reviewers see it
    const batch = settlement.agentView ? forReviewers(settlement.agentView) : batchViewOf(state);
    return { call: batch.calls.find((c) => c.id === callId)!, batch };
  });
}
