import { and, desc, eq, gte, inArray, lte, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { getDb, type Executor } from "@/db/client";
import { BATCH_KINDS, BATCH_OUTCOMES, batches, calls, DECISION_SOURCES, runs } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { loadBatchViews, type BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, reviewerQueueIds, type Actor } from "@/lib/auth/actor";
import { byIdDescending, mergePages } from "@/lib/batches/merge-pages";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";
import { Id } from "@/lib/ids";
import { endOfLocalDay, startOfLocalDay } from "@/lib/time/local-day";
import { DEFAULT_TIME_ZONE, TimeZoneName } from "@/lib/time/zone";

// The decided batches of a reviewer's queues, newest decision first: the audit view of who
// approved what. The export (export-history.ts) walks the same filtered list. Calls a policy
// blocked are decisions too (source `policy`): they are listed here, though no reviewer's queue
// ever showed them, and a batch blocked whole (hidden from the queue) has its row.

/** The statuses a batch has once nobody can decide it any more. */
export const SETTLED_STATUSES = ["decided", "expired", "cancelled"] as const;

/** `2025-03-01` (a whole day in `timeZone`) or an ISO-8601 time with its offset */
const DateOrTime = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);

/** The filters, shared by the list and the export. */
export const historyFilterFields = {
  queue: Id.optional().describe("a queue id (one of the reviewer's)"),
  agent: Id.optional().describe("an agent (key) id"),
  tool: z.string().min(1).max(200).optional().describe("batches with a call of this tool"),
  outcome: z.enum(BATCH_OUTCOMES).optional(),
  status: z.enum(SETTLED_STATUSES).optional(),
  decidedBy: Id.optional().describe("batches with a call decided by this reviewer id"),
  source: z
    .enum(DECISION_SOURCES)
    .optional()
    .describe(
      "batches with a call settled this way: by a reviewer, a policy (allowed or blocked), a remembered approval or the deadline",
    ),
  kind: z.enum(BATCH_KINDS).optional(),
  from: DateOrTime.optional().describe(
    "decided at or after (a date is its first instant in timeZone)",
  ),
  to: DateOrTime.optional().describe(
    "decided at or before (a date includes the whole day in timeZone)",
  ),
  timeZone: TimeZoneName.optional().describe(
    "the IANA zone whose calendar days a date-only from/to names (default UTC): the reviewer's own days, DST included",
  ),
};

/** The refinement every filtered query shares: `.refine(...fromNotAfterTo)`. */
export const fromNotAfterTo: [
  (f: { from?: string; to?: string; timeZone?: string }) => boolean,
  { message: string; path: string[] },
] = [
  (f) => !f.from || !f.to || startOf(f.from, f.timeZone) <= endOf(f.to, f.timeZone),
  { message: "'from' is after 'to'", path: ["from"] },
];

export const HistoryFilters = z.object(historyFilterFields).refine(...fromNotAfterTo);
export type HistoryFilters = z.infer<typeof HistoryFilters>;

export const ListHistoryQuery = z
  .object({
    ...historyFilterFields,
    limit: z.coerce.number().int().min(1).max(200).default(50),
    /** from a previous page's nextCursor */
    cursor: z.string().min(1).max(200).optional(),
  })
  .refine(...fromNotAfterTo);
export type ListHistoryQuery = z.infer<typeof ListHistoryQuery>;

const isDateOnly = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
/** the first instant `from` covers: a date means its first instant where the reviewer is */
const startOf = (value: string, timeZone = DEFAULT_TIME_ZONE) =>
  isDateOnly(value) ? startOfLocalDay(value, timeZone) : Date.parse(value);
/** the last millisecond `to` covers: a date means the whole day (23 or 25 hours on DST days) */
const endOf = (value: string, timeZone = DEFAULT_TIME_ZONE) =>
  isDateOnly(value) ? endOfLocalDay(value, timeZone) : Date.parse(value);

/** A GET form sends every field, empty ones as ""; an empty filter is no filter. */
export function withoutEmptyValues(query: unknown): unknown {
  if (typeof query !== "object" || query === null) return query;
  return Object.fromEntries(Object.entries(query).filter(([, value]) => value !== ""));
}

type Cursor = { decidedAt: number; id: string };

export function encodeHistoryCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.decidedAt}.${cursor.id}`).toString("base64url");
}

function decodeCursor(cursor: string): Cursor {
  const match = /^(\d{1,15})\.([0-9a-f-]{36})$/.exec(
    Buffer.from(cursor, "base64url").toString("utf8"),
  );
  if (!match) {
    throw new InvalidRequestError("That cursor is not one this API gave out.", [
      { path: "cursor", message: "invalid cursor" },
    ]);
  }
  return { decidedAt: Number(match[1]), id: match[2]! };
}

/**
 * A filtered history: `where` selects its batches (join `runs` for the agent filter); `filters` is
 * the same without the queue condition, for the per-queue pages of historyPage.
 */
export type HistoryScope = { queueIds: string[]; filters: SQL; where: SQL };

/**
 * The scope of a filtered history: only settled batches of `queueIds` (the reviewer's, or the one
 * named if the reviewer belongs to it); null when the reviewer has no queue.
 */
export async function historyConditions(
  db: Executor,
  actor: Actor,
  filters: HistoryFilters,
): Promise<HistoryScope | null> {
  const reviewer = requireReviewer(actor);
  const memberOf = await reviewerQueueIds(db, reviewer.id);
  if (filters.queue !== undefined && !memberOf.includes(filters.queue))
    throw new NotFoundError("Queue");
  const queueIds = filters.queue !== undefined ? [filters.queue] : memberOf;
  if (queueIds.length === 0) return null;

  const conditions: SQL[] = [
    // Every status but pending is settled. Written as the partial index
    // batches_insights_settled_idx states it, a literal and not a bound value, so that SQLite
    // walks that index (newest decision first per queue) rather than sorting the queue's whole
    // history for each page.
    sql`${batches.status} <> 'pending'`,
  ];
  if (filters.status) conditions.push(eq(batches.status, filters.status));
  if (filters.agent) conditions.push(eq(runs.agentKeyId, filters.agent));
  if (filters.kind) conditions.push(eq(batches.kind, filters.kind));
  if (filters.outcome) conditions.push(eq(batches.outcome, filters.outcome));
  if (filters.tool) {
    conditions.push(
      sql`exists (select 1 from ${calls} where ${calls.batchId} = ${batches.id} and ${calls.toolName} = ${filters.tool})`,
    );
  }
  if (filters.decidedBy) {
    conditions.push(
      sql`exists (select 1 from ${calls} where ${calls.batchId} = ${batches.id} and ${calls.decidedBy} = ${filters.decidedBy})`,
    );
  }
  if (filters.source) {
    conditions.push(
      sql`exists (select 1 from ${calls} where ${calls.batchId} = ${batches.id} and ${calls.decisionSource} = ${filters.source})`,
    );
  }
  if (filters.from)
    conditions.push(gte(batches.decidedAt, startOf(filters.from, filters.timeZone)));
  if (filters.to) conditions.push(lte(batches.decidedAt, endOf(filters.to, filters.timeZone)));
  return {
    queueIds,
    filters: and(...conditions)!,
    where: and(inArray(batches.queueId, queueIds), ...conditions)!,
  };
}

type PageRow = { id: string; decidedAt: number | null };

/** Newest decision first, ties broken by id (SQLite's order: a null time sorts last). */
const byDecisionDescending = (a: PageRow, b: PageRow) =>
  (b.decidedAt ?? -Infinity) - (a.decidedAt ?? -Infinity) || byIdDescending(a, b);

/**
 * One page of the filtered history's batch ids, newest decision first (ties broken by id, so
 * the cursor is exact): one walk of batches_insights_settled_idx per queue, merged (see
 * mergePages).
 */
export async function historyPage(
  db: Executor,
  scope: HistoryScope,
  cursor: Cursor | null,
  limit: number,
): Promise<{ ids: string[]; next: Cursor | null }> {
  // The same as `a < x or (a = x and b < y)`, as a row value: SQLite seeks the index to exactly
  // where the last page ended (the OR form bounds the walk by the time only).
  const after = cursor
    ? sql`(${batches.decidedAt}, ${batches.id}) < (${cursor.decidedAt}, ${cursor.id})`
    : undefined;
  const pages = await Promise.all(
    scope.queueIds.map((queueId) =>
      db
        .select({ id: batches.id, decidedAt: batches.decidedAt })
        .from(batches)
        .innerJoin(runs, eq(runs.id, batches.runId))
        .where(and(eq(batches.queueId, queueId), scope.filters, after))
        .orderBy(desc(batches.decidedAt), desc(batches.id))
        .limit(limit + 1),
    ),
  );
  const rows = mergePages(pages, byDecisionDescending, limit + 1);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    ids: page.map((r) => r.id),
    next: rows.length > limit && last ? { decidedAt: last.decidedAt ?? 0, id: last.id } : null,
  };
}

/** `GET /history`: the settled batches of the reviewer's queues, filtered, a page at a time. */
export async function listHistory(
  actor: Actor,
  query: unknown,
): Promise<{ batches: BatchView[]; nextCursor: string | null }> {
  requireReviewer(actor);
  const input = parseInput(ListHistoryQuery, withoutEmptyValues(query));
  const db = getDb();
  const scope = await historyConditions(db, actor, input);
  if (!scope) return { batches: [], nextCursor: null };
  const { ids, next } = await historyPage(
    db,
    scope,
    input.cursor ? decodeCursor(input.cursor) : null,
    input.limit,
  );
  return {
    batches: await loadBatchViews(db, ids, "audit"),
    nextCursor: next ? encodeHistoryCursor(next) : null,
  };
}
