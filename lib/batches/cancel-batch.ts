import { z } from "zod";
import { getDb } from "@/db/client";
import { batches } from "@/db/schema";
import { changedRow, guard, statement, untilWritten, updateRow } from "@/db/write-batch";
import { findBatchFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import {
  assembleBatchViews,
  readBatchViewRows,
  type BatchView,
} from "@/lib/read-models/batch-run-views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { webhookRow } from "@/lib/webhooks/enqueue-webhook";
import { releaseRunStatement } from "./settle-batch";
import { MultiLineText } from "@/lib/text/stored-text";

export const CancelBatchInput = z.object({ reason: MultiLineText.max(4000).optional() });
export type CancelBatchInput = z.infer<typeof CancelBatchInput>;

/** The agent withdraws a pending batch; its open calls are cancelled and the run is back in its hands. */
export async function cancelBatch(
  actor: Actor,
  batchId: string,
  body: unknown,
): Promise<BatchView> {
  const agent = requireAgent(actor);
  const input = parseInput(CancelBatchInput, body ?? {});
  return untilWritten(async () => {
    const db = getDb();
    const batch = await findBatchFor(db, agent, batchId);
    const rows = await readBatchViewRows(db, [batch.id]);
    const row = rows.batchRows[0]!;
    if (row.batch.status !== "pending") {
      throw new ConflictError(
        "not_pending",
        `This batch is already ${row.batch.status}.`,
        assembleBatchViews(rows, [batch.id], "agent")[0],
      );
    }
    const now = Date.now();
    const cancelled = {
      status: "cancelled" as const,
      decidedAt: now,
      cancelReason: input.reason ?? null,
    };
    row.batch = { ...row.batch, ...cancelled };
    const open = rows.callRows.filter((r) => r.call.status === "pending");
    for (const r of open) r.call = { ...r.call, status: "cancelled" };
    const view = assembleBatchViews(rows, [batch.id], "agent")[0]!;
    await commit([
      updateRow(batches, cancelled, "id = ? and status = 'pending'", batch.id),
      changedRow(),
      // the calls the view shows cancelled are the ones still open (none decided meanwhile)
      guard(
        "(select count(*) from calls where batch_id = ? and status = 'pending') = ?",
        batch.id,
        open.length,
      ),
      statement(
        "update calls set status = 'cancelled' where batch_id = ? and status = 'pending'",
        batch.id,
      ),
      releaseRunStatement(batch.runId, "running", now),
      eventRows({
        type: "batch.cancelled",
        runId: batch.runId,
        batchId: batch.id,
        queueId: batch.queueId,
        actor: actorRef(agent),
        data: { reason: input.reason ?? null },
        at: now,
      }),
      ...(row.batch.callbackUrl ? [webhookRow(row.batch, "batch.cancelled", view, now)] : []),
    ]);
    return view;
  });
}
