import { z } from "zod";
import { getDb } from "@/db/client";
import { runs } from "@/db/schema";
import { changedRow, updateRow, untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { loadRunView, type RunView } from "@/lib/read-models/batch-run-views";
import { actorRef, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { readRollbackOffer } from "./rollback-offer";
import { MultiLineText } from "@/lib/text/stored-text";

export const RequestRollbackInput = z.object({ reason: MultiLineText.max(4000).optional() });
export type RequestRollbackInput = z.infer<typeof RequestRollbackInput>;

/**
 * Asks for the run's reported actions to be undone. The next claim hands the worker the list
 * (newest first); a finished run becomes `ready` again so a worker can claim it to revert.
 */
export async function requestRollback(
  actor: Actor,
  runId: string,
  body: unknown,
): Promise<RunView> {
  const input = parseInput(RequestRollbackInput, body ?? {});
  return untilWritten(async () => {
    const db = getDb();
    const run = await findRunFor(db, actor, runId);
    if (run.status === "cancelled") {
      throw new ConflictError(
        "run_terminal",
        "The run was cancelled.",
        await loadRunView(db, run.id, { withBatches: false }),
      );
    }
    // A reviewer is not offered what no worker will perform (see rollback-offer.ts); the agent
    // asking for its own run's rollback is that worker, alive. Nobody is offered a rollback of a
    // finished run whose every reported action was already reverted: the claim would list none.
    // (A finished run reports nothing new until it is claimed, which moves its status and
    // updated_at: the write's compare-and-swap below re-checks what this read.)
    const offer = await readRollbackOffer(db, run);
    if (!offer.available && (actor.kind === "reviewer" || offer.nothingLeft)) {
      throw new ConflictError(
        "run_terminal",
        offer.reason,
        await loadRunView(db, run.id, { withBatches: false }),
      );
    }
    const now = Date.now();
    const finished = run.status === "completed" || run.status === "failed";
    await commit([
      updateRow(
        runs,
        {
          rollbackRequestedAt: now,
          rollbackReason: input.reason ?? null,
          updatedAt: now,
          ...(finished && { status: "ready" as const }),
        },
        "id = ? and status = ? and updated_at = ?",
        run.id,
        run.status,
        run.updatedAt,
      ),
      changedRow(),
      eventRows({
        type: "rollback.requested",
        runId: run.id,
        queueId: run.queueId,
        actor: actorRef(actor),
        data: { reason: input.reason ?? null },
        at: now,
      }),
    ]);
    return (await loadRunView(db, run.id, { withBatches: false }))!;
  });
}
