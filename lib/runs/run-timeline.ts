import { and, asc, desc, eq, gt, inArray, isNull, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { getDb, type Database } from "@/db/client";
import { events, runs } from "@/db/schema";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { loadRunView, type RunView } from "@/lib/read-models/batch-run-views";
import { reviewerQueueIds, type Actor } from "@/lib/auth/actor";
import { isoTime } from "@/lib/ids";
import { toWireEvent, type WireEvent } from "@/lib/events/wire";
import { readRollbackOffer, type RollbackOffer } from "./rollback-offer";

/** A timeline page holds at most this many events; `nextCursor` continues after the last one. */
export const TIMELINE_PAGE_LIMIT = 1000;

export const RunTimelineQuery = z.object({
  runId: z.string().min(1).max(200),
  /** a previous page's nextCursor: the events after that seq */
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, "not a cursor this API gave out")
    .optional(),
  limit: z.coerce.number().int().min(1).max(TIMELINE_PAGE_LIMIT).default(TIMELINE_PAGE_LIMIT),
});
export type RunTimelineQuery = z.infer<typeof RunTimelineQuery>;

export type RunTimeline = {
  /** the run with the batches the caller may see */
  run: RunView;
  /** the stored checkpoint's size in bytes (null when there is none); never its content */
  checkpointBytes: number | null;
  /** the caller's visible events of the run, oldest first */
  events: WireEvent[];
  /** more events follow: pass this as `cursor` */
  nextCursor: string | null;
  /** whether a worker can act on a rollback request, and if not, why */
  rollback: RollbackOffer;
  /** the worker that claimed the run last, and how its claim ended (null: it still holds it) */
  lastClaim: LastClaim | null;
};

/** How a claim ends: the run finished, its lease ran out, or the worker paused again. */
export type ClaimEnd = "completed" | "failed" | "lease_expired" | "paused";

export type LastClaim = {
  workerId: string;
  claimedAt: string;
  ended: { how: ClaimEnd; at: string } | null;
};

const CLAIM_ENDS: Record<string, ClaimEnd> = {
  "run.completed": "completed",
  "run.failed": "failed",
  "run.lease_expired": "lease_expired",
  "batch.created": "paused",
};

/**
 * The run's last claim, from its events: the run row forgets the worker once the claim ends, so
 * the page said "Not claimed" beside a timeline reading "Claimed by worker …". Two indexed reads
 * (events by run and seq) of one row each.
 */
async function readLastClaim(db: Database, runId: string): Promise<LastClaim | null> {
  const [claimed] = await db
    .select({ seq: events.seq, at: events.at, data: events.data })
    .from(events)
    .where(and(eq(events.runId, runId), eq(events.type, "run.claimed")))
    .orderBy(desc(events.seq))
    .limit(1);
  if (!claimed) return null;
  const [end] = await db
    .select({ type: events.type, at: events.at })
    .from(events)
    .where(
      and(
        eq(events.runId, runId),
        gt(events.seq, claimed.seq),
        inArray(events.type, Object.keys(CLAIM_ENDS)),
      ),
    )
    .orderBy(asc(events.seq))
    .limit(1);
  const workerId = claimed.data.workerId;
  return {
    workerId: typeof workerId === "string" ? workerId : "(unnamed)",
    claimedAt: isoTime(claimed.at),
    ended: end ? { how: CLAIM_ENDS[end.type]!, at: isoTime(end.at) } : null,
  };
}

// The batch snapshots in batch.* events repeat run.batches (as of that moment) and can be large.
const SNAPSHOT_KEYS = new Set(["batch"]);

function timelineEvent(row: typeof events.$inferSelect): WireEvent {
  const event = toWireEvent(row);
  const data = Object.fromEntries(
    Object.entries(event.data).filter(([k]) => !SNAPSHOT_KEYS.has(k)),
  );
  return { ...event, data };
}

/**
 * One run's story: the run, its batches, and its events in log order. An agent sees everything
 * of its own runs. A reviewer who may see the run (a batch of it, or its home, is in one of their
 * queues) sees the run-level events — claims, tool results, completion, rollback; these carry
 * the run's home queue, which may not be theirs — and the events of the batches in their queues
 * only, as on the run's stream.
 */
export async function runTimeline(
  actor: Actor,
  runId: string,
  query: unknown = {},
): Promise<RunTimeline> {
  const input = parseInput(RunTimelineQuery, { ...(query as object), runId });
  const db = getDb();
  const run = await findRunFor(db, actor, input.runId);
  const memberOf = actor.kind === "reviewer" ? await reviewerQueueIds(db, actor.id) : undefined;

  const conditions: SQL[] = [eq(events.runId, run.id)];
  if (memberOf) conditions.push(or(isNull(events.batchId), inArray(events.queueId, memberOf))!);
  if (input.cursor) conditions.push(gt(events.seq, Number(input.cursor)));

  const [view, [size], rows, rollback, lastClaim] = await Promise.all([
    loadRunView(db, run.id, { withBatches: true, batchQueueIds: memberOf }),
    db
      .select({ bytes: sql<number | null>`length(cast(${runs.checkpoint} as blob))` })
      .from(runs)
      .where(eq(runs.id, run.id)),
    db
      .select()
      .from(events)
      .where(and(...conditions))
      .orderBy(asc(events.seq))
      .limit(input.limit + 1),
    readRollbackOffer(db, run),
    readLastClaim(db, run.id),
  ]);
  const page = rows.slice(0, input.limit);
  return {
    run: view!,
    checkpointBytes: size?.bytes ?? null,
    events: page.map(timelineEvent),
    nextCursor: rows.length > input.limit ? String(page[page.length - 1]!.seq) : null,
    rollback,
    lastClaim,
  };
}
