"use client";

import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useEffect, useRef, useState } from "react";
import type { Batch } from "@/components/review-card/types";
import {
  addSnapshotPage,
  applyEvents,
  FIRST_PAGE_SIZE,
  fromSnapshot,
  mergeBatches,
  QUEUE_KEY,
  type QueueCache,
  type SnapshotPage,
  type WireEvent,
} from "./queue-cache";

/** After the first screenful (FIRST_PAGE_SIZE, rendered with the page), pages of this size. */
const PAGE_SIZE = 2_000;

export type Connection = "connecting" | "live" | "reconnecting" | "offline" | "signed-out";

// Every event type that can change a card; the stream names each message's type.
const CARD_EVENTS = [
  "batch.created",
  "batch.decided",
  "batch.expired",
  "batch.cancelled",
  "batch.escalated",
  "call.voted",
  "call.edited",
  "call.decided",
  "review.claimed",
  "review.released",
  "batch.set_aside",
  "batch.brought_back",
  "resync",
  "member.added",
  "member.removed",
  "member.role_changed",
  "queue.archived",
];

async function fetchJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { headers: { accept: "application/json" } });
  if (response.status === 401) {
    // Signed out in another tab, or the session expired: the screen offers to sign in again.
    throw new Error("Your session has ended. Sign in again to see the queue.");
  }
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json() as Promise<T>;
}

/** True when the API answers this tab's session 401 (signed out, revoked, or deactivated). */
async function sessionEnded(): Promise<boolean> {
  try {
    const response = await fetch(`/api/v1/queue/snapshot?limit=1`, {
      headers: { accept: "application/json" },
    });
    return response.status === 401;
  } catch {
    return false; // offline or the server is down: keep retrying
  }
}

async function fetchSnapshot(): Promise<QueueCache> {
  return fromSnapshot(
    await fetchJson<SnapshotPage>(`/api/v1/queue/snapshot?limit=${FIRST_PAGE_SIZE}`),
  );
}

/** Recently settled batches, for the "decided", "cancelled" and "all" views. */
export function useRecentlyDecided(enabled: boolean): void {
  const client = useQueryClient();
  const { data } = useQuery({
    queryKey: ["queue-decided"],
    enabled,
    // "decided" no longer lists withdrawn batches: those are a list of their own.
    queryFn: async () =>
      (
        await Promise.all(
          ["decided", "cancelled"].map(
            async (status) =>
              (await fetchJson<{ batches: Batch[] }>(`/api/v1/queue?status=${status}&limit=200`))
                .batches,
          ),
        )
      ).flat(),
  });
  useEffect(() => {
    if (!data) return;
    client.setQueryData<QueueCache>(QUEUE_KEY, (cache) =>
      cache
        ? mergeBatches(
            cache,
            data.map((batch) => ({ batch, asOf: 0 })),
          )
        : cache,
    );
  }, [client, data]);
}

/**
 * The queue: a snapshot of every pending card, then the reviewer stream applied to it as events
 * arrive. The stream resumes from the last event applied after any disconnect (the browser sends
 * Last-Event-ID; a reconnect we start ourselves passes it in the URL), so a tab that slept or went
 * offline catches up by itself.
 */
export function useLiveQueue(initial: SnapshotPage | null, onArrived: (ids: string[]) => void) {
  const client = useQueryClient();
  const query = useQuery({
    queryKey: QUEUE_KEY,
    queryFn: fetchSnapshot,
    // The first screenful was rendered on the server with the page: no wait for hydration.
    initialData: initial ? () => fromSnapshot(initial) : undefined,
    // 10,000 cards: comparing old and new trees on every patch would cost more than it saves.
    structuralSharing: false,
  });
  useRestOfSnapshot(client, query.data);
  const [connection, setConnection] = useState<Connection>("connecting");
  const onArrivedRef = useRef(onArrived);
  useEffect(() => {
    onArrivedRef.current = onArrived;
  });

  const ready = query.data !== undefined;
  useEffect(() => {
    if (!ready) return;
    return followStream(client, setConnection, (ids) => onArrivedRef.current(ids));
  }, [client, ready]);

  return { query, connection };
}

function followStream(
  client: QueryClient,
  setConnection: (c: Connection) => void,
  onArrived: (ids: string[]) => void,
): () => void {
  let source: EventSource | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let flushScheduled = false;
  let buffer: WireEvent[] = [];
  let stopped = false;
  const lastApplied = () => client.getQueryData<QueueCache>(QUEUE_KEY)?.lastEventId ?? 0;

  // Events are applied once per frame: a burst of pauses is one cache update and one render.
  const flush = () => {
    flushScheduled = false;
    const events = buffer;
    buffer = [];
    const cache = client.getQueryData<QueueCache>(QUEUE_KEY);
    if (!cache || events.length === 0) return;
    const applied = applyEvents(cache, events);
    client.setQueryData(QUEUE_KEY, applied.cache);
    if (applied.arrived.length) onArrived(applied.arrived);
    if (applied.refetch.length) void refetchBatches(client, applied.refetch);
    if (applied.resync) {
      // The log no longer reaches back to where this tab was: start again from a snapshot.
      void client.invalidateQueries({ queryKey: QUEUE_KEY });
    }
  };
  const receive = (message: MessageEvent<string>) => {
    buffer.push(JSON.parse(message.data) as WireEvent);
    if (!flushScheduled) {
      flushScheduled = true;
      requestAnimationFrame(flush);
      // A hidden tab gets no animation frames; it still has to keep up (and count unread cards).
      setTimeout(() => flushScheduled && flush(), 250);
    }
  };

  const connect = () => {
    source?.close();
    clearTimeout(retryTimer);
    if (stopped) return;
    if (!navigator.onLine) {
      setConnection("offline");
      return;
    }
    const current = new EventSource(`/api/v1/stream?lastEventId=${lastApplied()}`);
    source = current;
    current.onopen = () => setConnection("live");
    current.onerror = () => {
      if (current.readyState === EventSource.CLOSED) {
        // The browser gave up: the server restarted, or refused us. A revoked or signed-out
        // session is refused for good (and its open stream was ended), so ask before retrying.
        setConnection(navigator.onLine ? "reconnecting" : "offline");
        void sessionEnded().then((ended) => {
          if (stopped) return;
          if (ended) setConnection("signed-out");
          else retryTimer = setTimeout(connect, 2000);
        });
      } else {
        setConnection(navigator.onLine ? "reconnecting" : "offline");
      }
    };
    for (const type of CARD_EVENTS) current.addEventListener(type, receive);
  };

  const goOffline = () => {
    // The connection is as good as gone; close it so "online" starts a clean resume.
    source?.close();
    source = null;
    setConnection("offline");
  };
  const comeBack = () => {
    // Don't wait for the browser's retry timer: reconnect now and replay what was missed.
    if (document.visibilityState === "visible" && navigator.onLine) {
      if (!source || source.readyState !== EventSource.OPEN) connect();
    }
  };
  window.addEventListener("offline", goOffline);
  window.addEventListener("online", connect);
  document.addEventListener("visibilitychange", comeBack);
  connect();

  return () => {
    stopped = true;
    source?.close();
    clearTimeout(retryTimer);
    window.removeEventListener("offline", goOffline);
    window.removeEventListener("online", connect);
    document.removeEventListener("visibilitychange", comeBack);
  };
}

/**
 * Loads the snapshot's later pages in the background, while the first cards are already usable.
 * Each page is as of the snapshot's stream position, so events already applied win over it.
 */
function useRestOfSnapshot(client: QueryClient, cache: QueueCache | undefined): void {
  const cursor = cache?.nextCursor ?? null;
  useEffect(() => {
    if (!cursor) return;
    let cancelled = false;
    void (async () => {
      for (let attempt = 1; !cancelled; attempt++) {
        try {
          const page = await fetchJson<SnapshotPage>(
            `/api/v1/queue/snapshot?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(cursor)}`,
          );
          if (cancelled) return;
          client.setQueryData<QueueCache>(QUEUE_KEY, (current) =>
            current && current.nextCursor === cursor ? addSnapshotPage(current, page) : current,
          );
          return;
        } catch {
          // A dropped connection: try again shortly, the cards loaded so far stay usable.
          await new Promise((resolve) => setTimeout(resolve, Math.min(30_000, 1000 * attempt)));
        }
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [client, cursor]);
}

/** Fetches the current view of batches an event changed, and merges them as of their request. */
async function refetchBatches(client: QueryClient, ids: string[]): Promise<void> {
  const asOf = client.getQueryData<QueueCache>(QUEUE_KEY)?.lastEventId ?? 0;
  const views = await Promise.all(
    ids.map((id) =>
      fetchJson<Batch>(`/api/v1/batches/${encodeURIComponent(id)}`).catch(() => null),
    ),
  );
  client.setQueryData<QueueCache>(QUEUE_KEY, (cache) =>
    cache
      ? mergeBatches(
          cache,
          views.flatMap((batch) => (batch ? [{ batch, asOf }] : [])),
        )
      : cache,
  );
}

/** After a decision the server's answer is the freshest view there is, until the next event. */
export function storeBatch(client: QueryClient, batch: Batch): void {
  client.setQueryData<QueueCache>(QUEUE_KEY, (cache) =>
    cache ? mergeBatches(cache, [{ batch, asOf: cache.lastEventId }]) : cache,
  );
}
