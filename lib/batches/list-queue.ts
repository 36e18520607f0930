import { and, desc, eq, inArray, lt, type SQL } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { batches } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
import { loadBatchViews, type BatchView } from "@/lib/api/views";
import { requireReviewer, reviewerQueueIds, type Actor } from "@/lib/auth/actor";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";

export const ListQueueQuery = z.object({
  queue: z.string().min(1).optional(),
  status: z.enum(["pending", "decided", "all"]).default("pending"),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  /** from a previous page's nextCursor */
  cursor: z.string().min(1).optional(),
});
export type ListQueueQuery = z.infer<typeof ListQueueQuery>;

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

  const conditions: SQL[] = [
    inArray(batches.queueId, queueIds),
    eq(batches.hiddenFromReviewers, false),
  ];
  if (input.status === "pending") conditions.push(eq(batches.status, "pending"));
  if (input.status === "decided")
    conditions.push(inArray(batches.status, ["decided", "expired", "cancelled"]));
  if (input.cursor) conditions.push(lt(batches.id, decodeCursor(input.cursor)));
  const rows = await db
    .select({ id: batches.id })
    .from(batches)
    .where(and(...conditions))
    .orderBy(desc(batches.id))
    .limit(input.limit + 1);
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
