import { and, asc, eq, inArray, max } from "drizzle-orm";
import { getDb } from "@/db/client";
import { batches, events } from "@/db/schema";
import { loadBatchViews, type BatchView } from "@/lib/api/views";
import { requireReviewer, reviewerQueueIds, type Actor } from "@/lib/auth/actor";

/** More pending cards than any team can review; the page says so when the cap is reached. */
export const SNAPSHOT_LIMIT = 20_000;
// SQLite caps the parameters of one statement; views are loaded this many batches at a time.
const VIEW_CHUNK = 2_000;

export type QueueSnapshot = {
  batches: BatchView[];
  /** follow the stream from here: every change after the snapshot is an event after this seq */
  lastEventId: number;
  truncated: boolean;
};

/**
 * Every pending batch of the reviewer's queues, soonest deadline first, with the stream position
 * to follow from. The position is read first: a change landing between the two reads is both in
 * the snapshot and replayed, and applying a batch view twice is harmless; the reverse order
 * could lose it.
 */
export async function queueSnapshot(actor: Actor): Promise<QueueSnapshot> {
  const reviewer = requireReviewer(actor);
  const db = getDb();
  const [newest] = await db.select({ seq: max(events.seq) }).from(events);
  const queueIds = await reviewerQueueIds(db, reviewer.id);
  if (queueIds.length === 0)
    return { batches: [], lastEventId: newest?.seq ?? 0, truncated: false };
  const rows = await db
    .select({ id: batches.id })
    .from(batches)
    .where(and(eq(batches.status, "pending"), inArray(batches.queueId, queueIds)))
    .orderBy(asc(batches.expiresAt), asc(batches.id))
    .limit(SNAPSHOT_LIMIT + 1);
  const ids = rows.slice(0, SNAPSHOT_LIMIT).map((r) => r.id);
  const views: BatchView[] = [];
  for (let i = 0; i < ids.length; i += VIEW_CHUNK) {
    views.push(...(await loadBatchViews(db, ids.slice(i, i + VIEW_CHUNK))));
  }
  return {
    batches: views,
    lastEventId: newest?.seq ?? 0,
    truncated: rows.length > SNAPSHOT_LIMIT,
  };
}
