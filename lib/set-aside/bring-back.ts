import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { setAsides } from "@/db/schema";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import {
  assembleBatchViews,
  readBatchViewRows,
  type BatchView,
} from "@/lib/read-models/batch-run-views";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { stillReviewing } from "@/lib/claims/still-reviewing";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { returnsAt } from "@/lib/time/set-aside-times";

/**
 * Brings a card the caller set aside back into their queue now (the undo of "Not now", or
 * "bring back early"). Idempotent: with nothing of theirs set aside (never, already back, come
 * back by itself) it answers the batch as it is and writes nothing. Only the caller's own
 * set-aside is touched; others' stay. Reads, then one write batch deleting the row as read (a
 * new choice made meanwhile in another tab aborts it, and the next attempt sees that one) with
 * its `batch.brought_back` event — only when the card was still away: one that came back by
 * itself is news to nobody.
 */
export async function bringBack(actor: Actor, batchId: string): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  return untilWritten(async () => {
    const db = getDb();
    const { batch } = await findBatchForReviewer(db, reviewer, batchId);
    const [rows, mine] = await Promise.all([
      readBatchViewRows(db, [batch.id]),
      db
        .select({ until: setAsides.until })
        .from(setAsides)
        .where(and(eq(setAsides.batchId, batch.id), eq(setAsides.userId, reviewer.id))),
    ]);
    const now = Date.now();
    const row = rows.batchRows[0]!;
    const found = mine[0];
    if (!found) return assembleBatchViews(rows, [batch.id])[0]!;
    const wasAway = row.batch.status === "pending" && returnsAt(found.until, row.batch) > now;
    rows.batchRows[0] = {
      ...row,
      setAsides: row.setAsides.filter((s) => s.userId !== reviewer.id),
    };
    const view = assembleBatchViews(rows, [batch.id])[0]!;
    await commit([
      stillReviewing(batch, reviewer, null),
      statement(
        "delete from set_asides where batch_id = ? and user_id = ? and until = ?",
        batch.id,
        reviewer.id,
        found.until,
      ),
      changedRow(),
      ...(wasAway
        ? [
            eventRows({
              type: "batch.brought_back",
              runId: batch.runId,
              batchId: batch.id,
              queueId: batch.queueId,
              actor: actorRef(reviewer),
              data: { batch: view },
              at: now,
            }),
          ]
        : []),
    ]);
    return view;
  });
}
