import { and, desc, eq, lt } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { BATCH_STATUSES, batches, type BatchStatus } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { loadBatchViews, type BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, reviewerQueueIds, type Actor } from "@/lib/auth/actor";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";
import { byIdDescending, mergePages } from "./merge-pages";

export const ListQueueQuery = z.object({
  queue: z.string().min(1).optional(),
  /** `decided`: settled by a decision or a deadline; `cancelled` (withdrawn by the agent) is its own */
  status: z.enum(["pending", "decided", "cancelled", "all"]).default("pending"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** from a previous page's nextCursor */
  cursor: z.string().min(1).optional(),
});
export type ListQueueQuery = z.infer<typeof ListQueueQuery>;

const STATUSES_LISTED: Record<ListQueueQuery["status"], readonly BatchStatus[]> = {
  pending: ["pending"],
  // A withdrawn batch was never decided: listing it under "decided" misled reviewers.
  decided: ["decided", "expired"],
  cancelled: ["cancelled"],
  all: BATCH_STATUSES,
};

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[0-9a-f-]{36}$/.test(id)) {
    throw new InvalidRequestError("That cursor is not one this API gave out.", [
      { path: "cursor", message: "invalid cursor" },
    ]);
  }
  return id;
}

/** The batches of the reviewer's queues (or one of them), newest first, a page at a time. */
export async function listQueue(
  actor: Actor,
  query: unknown,
): Promise<{ batches: BatchView[]; nextCursor: string | null }> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(ListQueueQuery, query);
  const db = getDb();
  const memberOf = await reviewerQueueIds(db, reviewer.id);
  if (input.queue !== undefined && !memberOf.includes(input.queue))
    throw new NotFoundError("Queue");
  const queueIds = input.queue !== undefined ? [input.queue] : memberOf;
  if (queueIds.length === 0) return { batches: [], nextCursor: null };

  const before = input.cursor ? lt(batches.id, decodeCursor(input.cursor)) : undefined;
  // One index walk (batches_queue_idx: queue, status, id) per queue and status, merged: see
  // mergePages for why not one query over all of them.
  const pages = await Promise.all(
    queueIds.flatMap((queueId) =>
      STATUSES_LISTED[input.status].map((status) =>
        db
          .select({ id: batches.id })
          .from(batches)
          .where(
            and(
              eq(batches.queueId, queueId),
              eq(batches.status, status),
              eq(batches.hiddenFromReviewers, false),
              before,
            ),
          )
          .orderBy(desc(batches.id))
          .limit(input.limit + 1),
      ),
    ),
  );
  const rows = mergePages(pages, byIdDescending, input.limit + 1);
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    batches: await loadBatchViews(
      db,
      page.map((r) => r.id),
    ),
    nextCursor:
      rows.length > input.limit && last ? Buffer.from(last.id).toString("base64url") : null,
  };
}
