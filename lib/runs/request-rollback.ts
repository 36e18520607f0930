import { and, eq } from "drizzle-orm";
import { z } from "zod";
import { runs } from "@/db/schema";
import { findRunFor } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadRunView, type RunView } from "@/lib/api/views";
import { actorRef, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";

export const RequestRollbackInput = z.object({ reason: z.string().max(4000).optional() });
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
  return transact(async (tx) => {
    const run = await findRunFor(tx, actor, runId);
    if (run.status === "cancelled") {
      throw new ConflictError(
        "run_terminal",
        "The run was cancelled.",
        await loadRunView(tx, run.id, { withBatches: false }),
      );
    }
    const now = Date.now();
    const finished = run.status === "completed" || run.status === "failed";
    const [updated] = await tx
      .update(runs)
      .set({
        rollbackRequestedAt: now,
        rollbackReason: input.reason ?? null,
        updatedAt: now,
        ...(finished && { status: "ready" as const }),
      })
      .where(
        and(eq(runs.id, run.id), eq(runs.status, run.status), eq(runs.updatedAt, run.updatedAt)),
      )
      .returning();
    if (!updated) {
      throw new ConflictError(
        "not_ready",
        "The run changed meanwhile; try again.",
        await loadRunView(tx, run.id, { withBatches: false }),
      );
    }
    await appendEvent(tx, {
      type: "rollback.requested",
      runId: run.id,
      queueId: run.queueId,
      actor: actorRef(actor),
      data: { reason: input.reason ?? null },
      at: now,
    });
    return (await loadRunView(tx, run.id, { withBatches: false }))!;
  });
}
