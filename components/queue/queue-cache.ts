import type { Batch } from "@/components/review-card/types";

// The queue page's view of the world, kept in the TanStack Query cache under QUEUE_KEY and
// patched by stream events. Pure functions, so the merging rules are tested without a browser.

export const QUEUE_KEY = ["queue"] as const;

export type QueueCache = {
  byId: Record<string, Batch>;
  /**
   * The event seq each batch view is current as of. A view fetched before a newer event arrived
   * must not overwrite the newer one (fetches and events can land out of order).
   */
  asOf: Record<string, number>;
  /** the stream position this cache has applied */
  lastEventId: number;
  truncated: boolean;
};

export type WireEvent = {
  seq: number;
  type: string;
  at: string;
  runId: string | null;
  batchId: string | null;
  callId: string | null;
  queueId: string | null;
  data: Record<string, unknown>;
};

export function fromSnapshot(snapshot: {
  batches: Batch[];
  lastEventId: number;
  truncated: boolean;
}): QueueCache {
  const byId: Record<string, Batch> = {};
  const asOf: Record<string, number> = {};
  for (const batch of snapshot.batches) {
    byId[batch.id] = batch;
    asOf[batch.id] = snapshot.lastEventId;
  }
  return { byId, asOf, lastEventId: snapshot.lastEventId, truncated: snapshot.truncated };
}

/** Puts batch views into the cache unless it already holds a view as new or newer. */
export function mergeBatches(
  cache: QueueCache,
  views: { batch: Batch; asOf: number }[],
): QueueCache {
  let byId: Record<string, Batch> | null = null;
  let asOf: Record<string, number> | null = null;
  for (const { batch, asOf: seq } of views) {
    if ((cache.asOf[batch.id] ?? -1) > seq) continue;
    byId ??= { ...cache.byId };
    asOf ??= { ...cache.asOf };
    byId[batch.id] = batch;
    asOf[batch.id] = seq;
  }
  return byId && asOf ? { ...cache, byId, asOf } : cache;
}

export type AppliedEvents = {
  cache: QueueCache;
  /** batches an event changed without carrying their new view: fetch them */
  refetch: string[];
  /** batches that arrived (for the unread count) */
  arrived: string[];
  resync: boolean;
};

/** Applies a run of stream events, in order. */
export function applyEvents(cache: QueueCache, events: WireEvent[]): AppliedEvents {
  const views: { batch: Batch; asOf: number }[] = [];
  const stale = new Map<string, number>();
  const arrived: string[] = [];
  let resync = false;
  let lastEventId = cache.lastEventId;
  for (const event of events) {
    lastEventId = Math.max(lastEventId, event.seq);
    if (event.type === "resync") {
      resync = true;
      continue;
    }
    if (!event.batchId) continue;
    const view = event.data.batch as Batch | undefined;
    if (view && view.id === event.batchId) {
      views.push({ batch: view, asOf: event.seq });
      stale.delete(event.batchId);
      if (event.type === "batch.created") arrived.push(event.batchId);
    } else if (cache.byId[event.batchId] || views.some((v) => v.batch.id === event.batchId)) {
      // A vote, an edit or one call's decision: the event names the change, a fetch brings the view.
      stale.set(event.batchId, event.seq);
    }
  }
  const merged = mergeBatches({ ...cache, lastEventId }, views);
  return { cache: merged, refetch: [...stale.keys()], arrived, resync };
}

export type QueueFilters = {
  queue?: string;
  agent?: string;
  tool?: string;
  kind?: "action" | "plan";
  status: "pending" | "decided" | "all";
};

/**
 * The cards to show. "pending" keeps cards decided since `keepDecidedSince` where they were, so a
 * card decided elsewhere changes in place instead of vanishing under the reviewer's cursor.
 */
export function visibleBatches(
  cache: QueueCache,
  filters: QueueFilters,
  keepDecidedSince: number,
): Batch[] {
  const list: Batch[] = [];
  for (const batch of Object.values(cache.byId)) {
    if (filters.queue && batch.queue.id !== filters.queue) continue;
    if (filters.agent && batch.agent.name !== filters.agent) continue;
    if (filters.kind && batch.kind !== filters.kind) continue;
    if (filters.tool && !batch.calls.some((c) => c.toolName === filters.tool)) continue;
    const pending = batch.status === "pending";
    if (filters.status === "pending") {
      const decidedHere = !pending && Date.parse(batch.decidedAt ?? "") >= keepDecidedSince;
      if (!pending && !decidedHere) continue;
    } else if (filters.status === "decided" && pending) continue;
    list.push(batch);
  }
  if (filters.status === "decided") {
    return list.sort((a, b) => (b.decidedAt ?? "").localeCompare(a.decidedAt ?? ""));
  }
  // Soonest deadline first: the card that will time out next is the one to look at.
  return list.sort((a, b) => a.expiresAt.localeCompare(b.expiresAt) || a.id.localeCompare(b.id));
}
