import type { Batch } from "@/components/review-card/types";
import type { WireEvent } from "@/lib/events/wire";

// The queue page's view of the world, kept in the TanStack Query cache under QUEUE_KEY and
// patched by stream events. Pure functions, so the merging rules are tested without a browser.

export const QUEUE_KEY = ["queue"] as const;

/** The cards rendered with the page; the rest of the snapshot loads in the background. */
export const FIRST_PAGE_SIZE = 100;

export type QueueCache = {
  /**
   * Maps changed in place: copying 10,000 entries on every event would cost more than the render.
   * Each change makes a new QueueCache around them (a new `version`), which is what React and
   * TanStack Query see; nothing keeps an old wrapper.
   */
  byId: Map<string, Batch>;
  /**
   * The event seq each batch view is current as of. A view fetched before a newer event arrived
   * must not overwrite the newer one (fetches and events can land out of order).
   */
  asOf: Map<string, number>;
  /** the stream position this cache has applied */
  lastEventId: number;
  /** pending batches on the server when the snapshot began, for "loaded N of M" */
  pendingTotal: number;
  /** the next page of the snapshot still to load in the background, or null when complete */
  nextCursor: string | null;
  /** the stream position the snapshot's pages are as of */
  snapshotAt: number;
  version: number;
};

export type SnapshotPage = {
  batches: Batch[];
  lastEventId: number;
  pendingTotal: number;
  nextCursor: string | null;
};

export type { WireEvent };

export function fromSnapshot(page: SnapshotPage): QueueCache {
  const cache: QueueCache = {
    byId: new Map(),
    asOf: new Map(),
    lastEventId: page.lastEventId,
    pendingTotal: page.pendingTotal,
    nextCursor: page.nextCursor,
    snapshotAt: page.lastEventId,
    version: 0,
  };
  return mergeBatches(
    cache,
    page.batches.map((batch) => ({ batch, asOf: page.lastEventId })),
  );
}

/** Adds a later page of the snapshot (as of the snapshot's stream position). */
export function addSnapshotPage(cache: QueueCache, page: SnapshotPage): QueueCache {
  const merged = mergeBatches(
    cache,
    page.batches.map((batch) => ({ batch, asOf: cache.snapshotAt })),
  );
  return { ...merged, nextCursor: page.nextCursor, version: merged.version + 1 };
}

/** Puts batch views into the cache unless it already holds a view as new or newer. */
export function mergeBatches(
  cache: QueueCache,
  views: { batch: Batch; asOf: number }[],
): QueueCache {
  let changed = false;
  for (const { batch, asOf } of views) {
    if ((cache.asOf.get(batch.id) ?? -1) > asOf) continue;
    cache.byId.set(batch.id, batch);
    cache.asOf.set(batch.id, asOf);
    changed = true;
  }
  return changed ? { ...cache, version: cache.version + 1 } : cache;
}

const MEMBERSHIP_EVENTS = new Set([
  "member.added",
  "member.removed",
  "member.role_changed",
  "queue.archived",
]);

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
  const leaving = new Set<string>();
  const arrived: string[] = [];
  let resync = false;
  let lastEventId = cache.lastEventId;
  for (const event of events) {
    lastEventId = Math.max(lastEventId, event.seq);
    // Who may see what changed (a membership, an archived queue): start again from a snapshot.
    if (event.type === "resync" || MEMBERSHIP_EVENTS.has(event.type)) {
      resync = true;
      continue;
    }
    if (!event.batchId) continue;
    const view = event.data.batch as Batch | undefined;
    if (event.type === "batch.escalated" && view && event.queueId !== view.queue.id) {
      // The copy of the event in the queue the batch left: it is another team's card now.
      leaving.add(event.batchId);
      stale.delete(event.batchId);
      continue;
    }
    if (view && view.id === event.batchId) {
      leaving.delete(event.batchId);
      views.push({ batch: view, asOf: event.seq });
      stale.delete(event.batchId);
      if (event.type === "batch.created" || event.type === "batch.escalated") {
        arrived.push(event.batchId);
      }
    } else if (cache.byId.has(event.batchId) || views.some((v) => v.batch.id === event.batchId)) {
      // A vote, an edit or one call's decision: the event names the change, a fetch brings the view.
      stale.set(event.batchId, event.seq);
    }
  }
  const merged = mergeBatches({ ...cache, lastEventId, version: cache.version + 1 }, views);
  for (const id of leaving) {
    merged.byId.delete(id);
    merged.asOf.set(id, lastEventId);
  }
  return { cache: merged, refetch: [...stale.keys()], arrived, resync };
}

export type QueueFilters = {
  queue?: string;
  agent?: string;
  tool?: string;
  kind?: "action" | "plan";
  status: "pending" | "decided" | "cancelled" | "all";
};

export type QueueView = {
  cards: Batch[];
  /** pending batches loaded, whatever the filters */
  pendingCount: number;
  /** of those, the ones the queue, agent, kind and tool filters let through */
  matchingPendingCount: number;
  /** cards on screen that were decided since the page opened (they stay where they were) */
  decidedHere: number;
  /** for the filter menus */
  agents: string[];
  tools: string[];
  /** pending cards the viewer set aside ("Not now") that are not back yet, soonest back first */
  setAsideByViewer: Batch[];
  /** pending batches loaded that the viewer set aside, whatever the filters */
  setAsideCount: number;
};

/** The viewer's live set-aside of a batch: one whose moment has passed is back. */
function setAsideBy(batch: Batch, viewer: { id: string; now: number }): string | null {
  const mark = batch.setAside?.find(
    (s) => s.by.id === viewer.id && Date.parse(s.returnsAt) > viewer.now,
  );
  return mark ? mark.returnsAt : null;
}

/**
 * The cards to show, in one pass over the cache. "pending" keeps cards decided since
 * `keepDecidedSince` where they were, so a card decided elsewhere changes in place instead of
 * vanishing under the reviewer's cursor.
 */
export function queueView(
  cache: QueueCache,
  filters: QueueFilters,
  keepDecidedSince: number,
  /** who is looking, and the time: the cards they set aside leave their list until they are back */
  viewer?: { id: string; now: number },
): QueueView {
  const cards: Batch[] = [];
  const setAside: { batch: Batch; back: string }[] = [];
  const agents = new Set<string>();
  const tools = new Set<string>();
  let pendingCount = 0;
  let matchingPendingCount = 0;
  let decidedHere = 0;
  let setAsideCount = 0;
  for (const batch of cache.byId.values()) {
    const pending = batch.status === "pending";
    if (pending) pendingCount++;
    if (pending && viewer && setAsideBy(batch, viewer) !== null) setAsideCount++;
    agents.add(batch.agent.name);
    for (const call of batch.calls) tools.add(call.toolName);
    if (filters.queue && batch.queue.id !== filters.queue) continue;
    if (filters.agent && batch.agent.name !== filters.agent) continue;
    if (filters.kind && batch.kind !== filters.kind) continue;
    if (filters.tool && !batch.calls.some((c) => c.toolName === filters.tool)) continue;
    if (pending) matchingPendingCount++;
    const back = pending && viewer ? setAsideBy(batch, viewer) : null;
    if (back !== null) {
      setAside.push({ batch, back });
      continue;
    }
    if (filters.status === "pending" && !pending) {
      if (!(Date.parse(batch.decidedAt ?? "") >= keepDecidedSince)) continue;
      decidedHere++;
    } else if (filters.status === "decided" && (pending || batch.status === "cancelled")) {
      continue;
    } else if (filters.status === "cancelled" && batch.status !== "cancelled") continue;
    cards.push(batch);
  }
  // ISO-8601 UTC strings of one format order as their text: plain comparisons, no collation.
  if (filters.status === "decided" || filters.status === "cancelled") {
    cards.sort((a, b) => compare(b.decidedAt ?? "", a.decidedAt ?? "") || compare(a.id, b.id));
  } else {
    // Soonest deadline first: the card that will time out next is the one to look at.
    cards.sort((a, b) => compare(a.expiresAt, b.expiresAt) || compare(a.id, b.id));
  }
  return {
    cards,
    pendingCount,
    matchingPendingCount,
    decidedHere,
    agents: [...agents].sort(),
    tools: [...tools].sort(),
    setAsideByViewer: setAside
      .sort((a, b) => compare(a.back, b.back) || compare(a.batch.id, b.batch.id))
      .map((s) => s.batch),
    setAsideCount,
  };
}

/**
 * Of the batches that just arrived, the ones that are news to the viewer: not one they set aside
 * that is not back yet (an escalation into another queue of theirs keeps their mark). The tab
 * title's count and the notifications follow the list, as the header's count does.
 */
export function arrivalsFor(
  cache: QueueCache | undefined,
  ids: string[],
  viewer: { id: string; now: number },
): string[] {
  return ids.filter((id) => {
    const batch = cache?.byId.get(id);
    return !batch || batch.status !== "pending" || setAsideBy(batch, viewer) === null;
  });
}

/**
 * The queue header's count. "N pending" is what waits in the reviewer's own list: the cards
 * they set aside are out of it until they are back, so they are counted apart ("3 pending, 1 set
 * aside by you") rather than in a number the list below does not show. With filters, both
 * counts follow them, as the list and the "Set aside by you" list do.
 */
export function pendingCountText(
  view: QueueView,
  options: { filtered: boolean; loading?: { total: number } },
): string {
  const n = (count: number) => count.toLocaleString();
  // While pages load, the count is progress toward the server's total, which counts every card.
  if (options.loading)
    return `${n(view.pendingCount)} of ${n(options.loading.total)} pending loaded…`;
  const inList = view.pendingCount - view.setAsideCount;
  const away = options.filtered ? view.setAsideByViewer.length : view.setAsideCount;
  const text = options.filtered
    ? `${n(view.matchingPendingCount - view.setAsideByViewer.length)} of ${n(inList)} pending match`
    : `${n(inList)} pending`;
  return away > 0 ? `${text}, ${n(away)} set aside by you` : text;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
