import { desc, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { batches, runs } from "@/db/schema";
import { changedRow, updateRow, untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { actorRef, type AgentActor } from "@/lib/auth/actor";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";

// MCP has no claim, heartbeat or complete: the model that asked runs the approved call itself,
// in its own session, the moment it reads the decision. Without this a run started through MCP
// stayed `ready` ("Ready to resume") forever, waiting for a worker that does not exist.

/**
 * Finishes a run started through MCP once its client has read the decision of the run's latest
 * batch: `ready` → `completed`, with a `run.completed` event saying so. Runs started through the
 * HTTP API (a worker claims them), runs with a rollback waiting, and a batch that is not the
 * run's latest are left alone. Returns whether this call finished the run.
 */
export async function finishMcpRunOnRead(agent: AgentActor, batch: BatchView): Promise<boolean> {
  if (batch.status === "pending") return false;
  return untilWritten(async () => {
    const db = getDb();
    const run = await findRunFor(db, agent, batch.runId);
    if (run.origin !== "mcp" || run.status !== "ready" || run.rollbackRequestedAt !== null) {
      return false;
    }
    const [latest] = await db
      .select({ id: batches.id })
      .from(batches)
      .where(eq(batches.runId, run.id))
      .orderBy(desc(batches.createdAt), desc(batches.id))
      .limit(1);
    if (latest?.id !== batch.id) return false;
    const now = Date.now();
    const result = { via: "mcp", batchId: batch.id, outcome: batch.outcome, status: batch.status };
    await commit([
      // As read: a run moved since (a rollback asked for, a new pause) is not finished here.
      updateRow(
        runs,
        { status: "completed", result, updatedAt: now },
        "id = ? and status = 'ready' and updated_at = ? and rollback_requested_at is null",
        run.id,
        run.updatedAt,
      ),
      changedRow(),
      eventRows({
        type: "run.completed",
        runId: run.id,
        queueId: run.queueId,
        actor: actorRef(agent),
        data: { result },
        at: now,
      }),
    ]);
    return true;
  });
}
