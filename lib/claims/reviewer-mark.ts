import { getDb, type Executor } from "@/db/client";
import { changedRow, untilWritten, type Statement } from "@/db/write-batch";
import { findBatchForReviewer, type DecisionTarget } from "@/lib/access/find-for-caller";
import { actorRef, type ReviewerActor } from "@/lib/auth/actor";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import {
  assembleBatchViews,
  readBatchViewRows,
  type BatchView,
  type BatchViewRows,
} from "@/lib/read-models/batch-run-views";
import { stillReviewing } from "./still-reviewing";

type BatchViewRow = BatchViewRows["batchRows"][number];

/** What a mark's verb decides from: the batch as the reviewer may see it, read before the write. */
export type ReviewerMarkRead<Extra> = {
  target: DecisionTarget;
  /** the batch's view row (its claim and set-asides included) */
  row: BatchViewRow;
  /** what the verb's own `read` answered */
  extra: Extra;
  /** taken after the reads: a mark the reads saw live and that ended since is past it */
  now: number;
  /** the batch as read, for a 409's `current` or an answer that writes nothing */
  current: () => BatchView;
};

/** The one write a mark's verb makes, with what it says. */
export type ReviewerMarkChange = {
  /** the view row as the write leaves it: the batch the event carries and the verb answers */
  row: BatchViewRow;
  /** the mark's own write, its condition in its SQL: the batch aborts unless it changes a row */
  write: Statement;
  /**
   * the guard re-checks that the batch is still pending before its deadline (a new mark), else
   * only that it is in its queue with the caller a member (taking a mark away)
   */
  whilePending: boolean;
  /** the event, carrying the batch as `data.batch`; null when the change is news to nobody */
  event: { type: string; data?: Record<string, unknown> } | null;
};

/**
 * A reviewer's own mark on a batch — a review claim, a set-aside — made, renewed or taken away,
 * deciding nothing (the verb has checked who asks and parsed what they sent). Reads the batch the
 * caller may act on (else 404) with its view and the verb's own `read`; `change` checks them
 * (throwing the verb's 409s) and answers the write, or null to answer the batch as it is without
 * writing. The write is one batch (lib/README.md, invariant 2):
 * the guard that the batch is still in the queue it was read in with the caller a member (and,
 * for a new mark, still pending before its deadline), the mark's conditional write, and its
 * event. A write that finds the state moved aborts, and `untilWritten` runs it all again.
 */
export async function changeReviewerMark<Extra>(
  reviewer: ReviewerActor,
  batchId: string,
  steps: {
    read: (db: Executor, target: DecisionTarget) => Promise<Extra>;
    change: (read: ReviewerMarkRead<Extra>) => ReviewerMarkChange | null;
  },
): Promise<BatchView> {
  return untilWritten(async () => {
    const db = getDb();
    const target = await findBatchForReviewer(db, reviewer, batchId);
    const { batch } = target;
    const [rows, extra] = await Promise.all([
      readBatchViewRows(db, [batch.id]),
      steps.read(db, target),
    ]);
    const now = Date.now();
    const viewOf = (row: BatchViewRow) =>
      assembleBatchViews({ ...rows, batchRows: [row] }, [batch.id])[0]!;
    const row = rows.batchRows[0]!;
    const change = steps.change({ target, row, extra, now, current: () => viewOf(row) });
    if (!change) return viewOf(row);
    const view = viewOf(change.row);
    await commit([
      stillReviewing(batch, reviewer, change.whilePending ? now : null),
      change.write,
      changedRow(),
      ...(change.event
        ? [
            eventRows({
              type: change.event.type,
              runId: batch.runId,
              batchId: batch.id,
              queueId: batch.queueId,
              actor: actorRef(reviewer),
              data: { batch: view, ...change.event.data },
              at: now,
            }),
          ]
        : []),
    ]);
    return view;
  });
}
