import { and, asc, count, eq, gt, inArray, max, or, type SQL } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { batches, events } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { loadBatchViews, type BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, reviewerQueueIds, type Actor } from "@/lib/auth/actor";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";

// SQLite caps the parameters of one statement; views are loaded this many batches at a time.
const VIEW_CHUNK = 1_000;

export const QueueSnapshotQuery = z.object({
  /** one of the reviewer's queues; all of them when absent */
  queue: z.string().min(1).optional(),
  limit: z.coerce.number().int().min(1).max(5_000).default(5_000),
  /** from a previous page's nextCursor */
  cursor: z.string().min(1).optional(),
});
export type QueueSnapshotQuery = z.input<typeof QueueSnapshotQuery>;

export type QueueSnapshot = {
  batches: BatchView[];
  /** follow the stream from here: every change after the snapshot is an event after this seq */
  lastEventId: number;
  /** every pending batch of the reviewer's queues, on all pages */
  pendingTotal: number;
  nextCursor: string | null;
};

type Cursor = { expiresAt: number; id: string };

function decodeCursor(cursor: string): Cursor {
  const [expiresAt, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  if (!expiresAt || !/^\d+$/.test(expiresAt) || !id || !/^[0-9a-f-]{36}$/.test(id)) {
    throw new InvalidRequestError("That cursor is not one this API gave out.", [
      { path: "cursor", message: "invalid cursor" },
    ]);
  }
  return { expiresAt: Number(expiresAt), id };
}

const encodeCursor = (c: Cursor) => Buffer.from(`${c.expiresAt}|${c.id}`).toString("base64url");

/**
 * The pending batches of the reviewer's queues (or of one of them), soonest deadline first, a page at a time, with the
 * stream position to follow from. The position is read first: a change landing between the reads
 * is both in the page and replayed, and applying a batch view twice is harmless; the reverse order
 * could lose it. A page can be small (the first screenful, rendered with the page) or large (the
 * rest, fetched in the background).
 */
export async function queueSnapshot(actor: Actor, query: unknown = {}): Promise<QueueSnapshot> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(QueueSnapshotQuery, query);
  const db = getDb();
  const [newest] = await db.select({ seq: max(events.seq) }).from(events);
  const lastEventId = newest?.seq ?? 0;
  const memberOf = await reviewerQueueIds(db, reviewer.id);
  // As GET /queue answers: a queue the reviewer is not in is one that does not exist for them.
  if (input.queue !== undefined && !memberOf.includes(input.queue))
    throw new NotFoundError("Queue");
  const queueIds = input.queue !== undefined ? [input.queue] : memberOf;
  if (queueIds.length === 0) return { batches: [], lastEventId, pendingTotal: 0, nextCursor: null };

  const pendingInQueues = and(eq(batches.status, "pending"), inArray(batches.queueId, queueIds));
  const conditions: (SQL | undefined)[] = [pendingInQueues];
  if (input.cursor) {
    const after = decodeCursor(input.cursor);
    conditions.push(
      or(
        gt(batches.expiresAt, after.expiresAt),
        and(eq(batches.expiresAt, after.expiresAt), gt(batches.id, after.id)),
      ),
    );
  }
  const rows = await db
    .select({ id: batches.id, expiresAt: batches.expiresAt })
    .from(batches)
    .where(and(...conditions))
    .orderBy(asc(batches.expiresAt), asc(batches.id))
    .limit(input.limit + 1);
  const page = rows.slice(0, input.limit);
  const [total] = await db.select({ n: count() }).from(batches).where(pendingInQueues);

  const views: BatchView[] = [];
  for (let i = 0; i < page.length; i += VIEW_CHUNK) {
    views.push(
      ...(await loadBatchViews(
        db,
        page.slice(i, i + VIEW_CHUNK).map((r) => r.id),
      )),
    );
  }
  const last = page[page.length - 1];
  return {
    batches: views,
    lastEventId,
    pendingTotal: total?.n ?? 0,
    nextCursor: rows.length > input.limit && last ? encodeCursor(last) : null,
  };
}
