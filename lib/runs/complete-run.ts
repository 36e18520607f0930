import { z } from "zod";
import { getDb } from "@/db/client";
import { untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { runView, type RunView } from "@/lib/read-models/batch-run-views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { whileHeld } from "./while-held";
import { SingleLineText } from "@/lib/text/stored-text";

export const CompleteRunInput = z.object({
  /** required once the run was claimed; a run that never paused is held by its creator */
  claimToken: SingleLineText.min(1).max(200).optional(),
  outcome: z.enum(["completed", "failed"]),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});
export type CompleteRunInput = z.infer<typeof CompleteRunInput>;

/** The claim holder ends the run; the claim ends with it. */
export async function completeRun(actor: Actor, runId: string, body: unknown): Promise<RunView> {
  const agent = requireAgent(actor);
  const input = parseInput(CompleteRunInput, body);
  return untilWritten(async () => {
    const run = await findRunFor(getDb(), agent, runId);
    // A rollback asked for before this claim began was handed to this worker with the claim,
    // so finishing the claim answers it; one asked for later waits for the next claim.
    const rollbackAnswered =
      run.rollbackRequestedAt !== null && run.rollbackRequestedAt <= (run.claimedAt ?? 0);
    // One asked for during this claim must still reach a worker: like a rollback of a finished
    // run, it leaves the run ready to be claimed (a terminal run could never be claimed again).
    const rollbackWaiting = run.rollbackRequestedAt !== null && !rollbackAnswered;
    const now = Date.now();
    const changes = {
      status: rollbackWaiting ? ("ready" as const) : input.outcome,
      result: input.result ?? null,
      error: input.error ?? null,
      claimTokenHash: null,
      claimWorkerId: null,
      leaseExpiresAt: null,
      ...(rollbackAnswered && { rollbackRequestedAt: null, rollbackReason: null }),
      updatedAt: now,
    };
    await commit([
      ...(await whileHeld(run, input.claimToken, changes, now)),
      eventRows({
        type: input.outcome === "completed" ? "run.completed" : "run.failed",
        runId: run.id,
        queueId: run.queueId,
        actor: actorRef(agent),
        data: {
          ...(input.result !== undefined && { result: input.result }),
          ...(input.error !== undefined && { error: input.error }),
        },
        at: now,
      }),
    ]);
    return runView({ ...run, ...changes }, agent.name);
  });
}
