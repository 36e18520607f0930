import { and, eq } from "drizzle-orm";
import { setAsides } from "@/db/schema";
import { statement } from "@/db/write-batch";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { changeReviewerMark } from "@/lib/claims/reviewer-mark";
import { returnsAt } from "@/lib/time/set-aside-times";

/**
 * Brings a card the caller set aside back into their queue now (the undo of "Not now", or
 * "bring back early"). Idempotent: with nothing of theirs set aside (never, already back, come
 * back by itself) it answers the batch as it is and writes nothing. Only the caller's own
 * set-aside is touched; others' stay. Reads, then one write batch (lib/claims/reviewer-mark.ts)
 * deleting the row as read (a new choice made meanwhile in another tab aborts it, and the next
 * attempt sees that one) with its `batch.brought_back` event — only when the card was still
 * away: one that came back by itself is news to nobody.
 */
export async function bringBack(actor: Actor, batchId: string): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  return changeReviewerMark(reviewer, batchId, {
    read: (db, { batch }) =>
      db
        .select({ until: setAsides.until })
        .from(setAsides)
        .where(and(eq(setAsides.batchId, batch.id), eq(setAsides.userId, reviewer.id))),
    change: ({ target: { batch }, row, extra: [found], now }) => {
      if (!found) return null;
      const wasAway = row.batch.status === "pending" && returnsAt(found.until, row.batch) > now;
      return {
        row: { ...row, setAsides: row.setAsides.filter((s) => s.userId !== reviewer.id) },
        write: statement(
          "delete from set_asides where batch_id = ? and user_id = ? and until = ?",
          batch.id,
          reviewer.id,
          found.until,
        ),
        whilePending: false,
        event: wasAway ? { type: "batch.brought_back" } : null,
      };
    },
  });
}
