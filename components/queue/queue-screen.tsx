"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useWindowVirtualizer } from "@tanstack/react-virtual";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import {
  ReviewCard,
  type BatchDecisionRequest,
  type DecisionRequest,
  type DecisionResult,
  type ReviewCardHandle,
} from "@/components/review-card/index";
import {
  claimReviewAction,
  decideBatchAction,
  decideCallAction,
  releaseReviewAction,
  bringBackAction,
  setAsideAction,
  type BatchResult,
} from "@/app/(reviewer)/actions";
import type { Batch } from "@/components/review-card/types";
import type { SetAsideChoice } from "@/lib/time/set-aside-times";
import { useViewerTimeFormat } from "@/components/time/time-zone-provider";
import { ConnectionBadge } from "./connection-badge";
import { EmptyQueue, type QueueWelcome } from "./empty-queue";
import { toDecisionResult } from "./decision-result";
import { KeyboardHelp } from "./keyboard-help";
import { NotifyToggle } from "./notify-toggle";
import {
  arrivalsFor,
  pendingCountText,
  QUEUE_KEY,
  queueView,
  type QueueCache,
  type SnapshotPage,
} from "./queue-cache";
import { QueueFilterBar } from "./queue-filters";
import styles from "./queue.module.css";
import { useHeldClaims } from "./use-held-claims";
import {
  cardLabel,
  mineOf,
  SetAsideChooser,
  SetAsideList,
  SetAsideNote,
  SetAsideToast,
  type SetAsideToastState,
} from "./set-aside";
import { storeBatch, useLiveQueue, useRecentlyDecided } from "./use-live-queue";
import { useNotifications } from "./use-notifications";
import { useQueueFilters } from "./use-queue-filters";
import { UndoToast } from "./undo-toast";
import { useHeldApproval } from "./use-held-approval";
import { useShortcuts } from "./use-shortcuts";
import { useUnreadTitle } from "./use-tab-title";

export type QueueScreenProps = {
  viewer: { id: string; name: string };
  queues: { id: string; name: string }[];
  /** the first screenful of cards, rendered with the page */
  initial: SnapshotPage | null;
  /** the person's setting: single-key shortcuts act (WCAG 2.1.4 lets them turn them off) */
  shortcutsEnabled?: boolean;
  /** what an empty queue says to this person */
  welcome?: QueueWelcome;
};

export function QueueScreen({
  viewer,
  queues,
  initial,
  shortcutsEnabled = true,
  welcome,
}: QueueScreenProps) {
  const client = useQueryClient();
  const [filters, setFilters] = useQueueFilters();
  const timeFormat = useViewerTimeFormat();
  const markArrived = useUnreadTitle("Queue · Countersign");
  const openCard = useRef<(batchId: string) => void>(() => {});
  const notifications = useNotifications(openCard);
  const { notify } = notifications;
  const onArrived = useCallback(
    (ids: string[]) => {
      const cache = client.getQueryData<QueueCache>(QUEUE_KEY);
      const news = arrivalsFor(cache, ids, { id: viewer.id, now: Date.now() });
      if (news.length === 0) return;
      markArrived(news);
      notify(news);
    },
    [client, viewer.id, markArrived, notify],
  );
  const { query, connection } = useLiveQueue(initial, onArrived);
  useRecentlyDecided(filters.status !== "pending");
  // Cards decided after this moment stay in the pending view, changed in place.
  const [keepDecidedSince, setKeepDecidedSince] = useState(() => Date.now());

  const cache = query.data;
  // The time the view is worked out at: it moves on when a card set aside is due back.
  const [clock, setClock] = useState(() => Date.now());
  const view = useMemo(
    () =>
      cache ? queueView(cache, filters, keepDecidedSince, { id: viewer.id, now: clock }) : null,
    [cache, filters, keepDecidedSince, viewer.id, clock],
  );
  useEffect(() => {
    if (!cache) return;
    let next = Infinity;
    for (const batch of cache.byId.values()) {
      const mine = batch.status === "pending" ? mineOf(batch, viewer.id, clock) : undefined;
      if (mine) next = Math.min(next, Date.parse(mine.returnsAt));
    }
    if (next === Infinity) return;
    const timer = setTimeout(
      () => setClock(Date.now()),
      Math.min(2_147_000_000, Math.max(0, next - Date.now()) + 50),
    );
    return () => clearTimeout(timer);
  }, [cache, viewer.id, clock]);
  const cards = useMemo(() => view?.cards ?? [], [view]);
  const filtered = Boolean(filters.queue || filters.agent || filters.tool || filters.kind);
  const decidedHere = filters.status === "pending" ? (view?.decidedHere ?? 0) : 0;
  const loadingRest = Boolean(cache?.nextCursor);

  const [selectedId, setSelectedId] = useState<string | null>(null);
  const selectedIndex = useMemo(
    () =>
      Math.max(
        0,
        cards.findIndex((c) => c.id === selectedId),
      ),
    [cards, selectedId],
  );
  const handles = useRef(new Map<string, ReviewCardHandle>());
  // The list scrolls with the window; where it starts moves when a banner shows or hides.
  const [scrollMargin, setScrollMargin] = useState(0);
  const bannerKey = `${connection}:${decidedHere > 0}:${loadingRest}`;
  const listRef = useCallback(
    (node: HTMLDivElement | null) => {
      if (node && bannerKey) setScrollMargin(node.getBoundingClientRect().top + window.scrollY);
    },
    [bannerKey],
  );
  // A new function would make the virtualizer re-measure all 10,000 items on every scroll frame.
  const getItemKey = useCallback((index: number) => cards[index]!.id, [cards]);
  const virtualizer = useWindowVirtualizer({
    count: cards.length,
    estimateSize: () => 320,
    overscan: 4,
    gap: 16,
    scrollMargin,
    getItemKey,
  });

  const select = useCallback(
    (index: number) => {
      const card = cards[index];
      if (!card) return;
      setSelectedId(card.id);
      virtualizer.scrollToIndex(index, { align: "auto" });
      // The card may only now be rendered: focus it on the next frame — unless focus moved in
      // the meantime (a shortcut typed right after, like r opening the reason field, wins).
      const focusedBefore = document.activeElement;
      requestAnimationFrame(() => {
        if (document.activeElement === focusedBefore) handles.current.get(card.id)?.focus();
      });
    },
    [cards, virtualizer],
  );
  useEffect(() => {
    openCard.current = (batchId) => select(cards.findIndex((c) => c.id === batchId));
  }, [cards, select]);
  const selected = cards[selectedIndex];
  const [helpOpen, setHelpOpen] = useState(false);
  const onDecide = useCallback(
    async ({ callId, ...decision }: DecisionRequest): Promise<DecisionResult> => {
      const batchId = cards.find((b) => b.calls.some((c) => c.id === callId))?.id ?? "";
      return settle(client, await decideCallAction(batchId, callId, decision));
    },
    [cards, client],
  );
  const onDecideBatch = useCallback(
    async ({ batchId, ...decision }: BatchDecisionRequest): Promise<DecisionResult> =>
      settle(client, await decideBatchAction(batchId, decision)),
    [client],
  );
  const held = useHeldApproval({
    send: async ({ batchId, request: { callId, ...decision } }) =>
      settle(client, await decideCallAction(batchId, callId, decision)),
    batchOf: (batchId) => cache?.byId.get(batchId),
    viewerId: viewer.id,
  });
  // The card whose approval is being held back gets a mark of its own, beside the toast.
  const heldBatchId = held.toast?.phase === "held" ? held.toast.intent.batchId : null;
  const undoHeld = () => {
    const intent = held.undo();
    if (intent) handles.current.get(intent.batchId)?.focus();
  };
  useShortcuts(
    {
      j: () => select(selectedId === null ? 0 : Math.min(selectedIndex + 1, cards.length - 1)),
      k: () => select(Math.max(selectedIndex - 1, 0)),
      // One key must not decide a production action at once: it is held back for an undo window.
      a: () => {
        const intent = selected && handles.current.get(selected.id)?.nextApproval();
        if (intent) held.hold(intent);
      },
      r: () => selected && handles.current.get(selected.id)?.reject(),
      e: () => selected && handles.current.get(selected.id)?.edit(),
      s: () => selected?.status === "pending" && openChooser(selected.id),
      z: undoHeld,
      "?": () => setHelpOpen((open) => !open),
    },
    shortcutsEnabled,
  );

  // "Not now": the chooser `s` (or a card's Not now button) opens, and what came of it.
  const [chooserFor, setChooserFor] = useState<string | null>(null);
  const [asideToast, setAsideToast] = useState<SetAsideToastState | null>(null);
  const dismissAsideToast = useCallback(() => setAsideToast(null), []);
  const openChooser = useCallback(
    (batchId: string) => {
      setClock(Date.now());
      setChooserFor(batchId);
    },
    [setChooserFor],
  );
  const chooseSetAside = async (choice: SetAsideChoice) => {
    const batchId = chooserFor;
    setChooserFor(null);
    const batch = batchId ? cache?.byId.get(batchId) : undefined;
    if (!batchId || !batch) return;
    // The card leaves the list: the one after it (or before it) is selected instead.
    const index = cards.findIndex((c) => c.id === batchId);
    const neighbour = cards[index + 1] ?? cards[index - 1];
    const result = await setAsideAction(batchId, choice, timeFormat.timeZone);
    setClock(Date.now());
    if (!result.ok) {
      if (result.current) storeBatch(client, result.current as Batch);
      setAsideToast({ phase: "failed", text: result.message });
      handles.current.get(batchId)?.focus();
      return;
    }
    storeBatch(client, result.batch);
    const at = Date.now();
    const mine = mineOf(result.batch, viewer.id, at);
    setAsideToast({
      phase: "set",
      at,
      batchId,
      label: cardLabel(result.batch),
      returnsAt: mine?.returnsAt ?? result.batch.expiresAt,
    });
    if (neighbour && batchId === selected?.id) {
      setSelectedId(neighbour.id);
      requestAnimationFrame(() => handles.current.get(neighbour.id)?.focus());
    }
  };
  const bringBackCard = async (batchId: string) => {
    const result = await bringBackAction(batchId);
    setClock(Date.now());
    if (!result.ok) {
      setAsideToast({ phase: "failed", text: result.message });
      return;
    }
    storeBatch(client, result.batch);
    setAsideToast({ phase: "back", label: cardLabel(result.batch) });
  };

  const onClaim = useCallback(
    async (batchId: string, claim: boolean): Promise<DecisionResult> =>
      settle(client, await (claim ? claimReviewAction(batchId) : releaseReviewAction(batchId))),
    [client],
  );
  useHeldClaims(cards, viewer.id, onClaim);

  return (
    // While the toast is up, the page grows by its height, so it never covers the last card's
    // buttons for good (queue.module.css).
    <div className={styles.screen} data-toast={held.toast || asideToast ? "" : undefined}>
      <div className={styles.titleRow}>
        <h1>Queue</h1>
        <span className={styles.count} data-testid="pending-count">
          {view
            ? // The count follows the filters shown under it (issue 26), and says so.
              pendingCountText(view, {
                filtered,
                loading: loadingRest ? { total: cache!.pendingTotal } : undefined,
              })
            : ""}
        </span>
        <ConnectionBadge connection={query.isError ? "reconnecting" : connection} />
        <NotifyToggle {...notifications} />
        <button
          type="button"
          className={`shell-button ${styles.keysButton}`}
          onClick={() => setHelpOpen(true)}
          aria-keyshortcuts={shortcutsEnabled ? "?" : undefined}
          data-testid="keys-button"
        >
          Keys{shortcutsEnabled ? <kbd>?</kbd> : <span className={styles.keysOff}>(off)</span>}
        </button>
      </div>
      <QueueFilterBar
        filters={filters}
        onChange={setFilters}
        queues={queues.map((q) => ({ value: q.id, label: q.name }))}
        agents={view?.agents ?? []}
        tools={view?.tools ?? []}
      />
      {connection === "offline" && (
        <p className={styles.banner} role="status" data-testid="offline-banner">
          You are offline. Cards may be out of date; they catch up when the connection returns.
        </p>
      )}
      {connection === "signed-out" && (
        <p className={styles.banner} role="alert" data-testid="signed-out-banner">
          Your session has ended (signed out, or its access was revoked), so this queue no longer
          updates. <a href="/sign-in?next=/queue">Sign in again</a>
        </p>
      )}
      {connection === "reconnecting" && (
        <p className={styles.banner} role="status" data-testid="reconnecting-banner">
          Reconnecting to the live queue… cards may be out of date for a moment.
        </p>
      )}
      <SetAsideList
        batches={view?.setAsideByViewer ?? []}
        viewerId={viewer.id}
        now={clock}
        timeZone={timeFormat.timeZone}
        onBringBack={(batchId) => void bringBackCard(batchId)}
      />
      {decidedHere > 0 && (
        <p className={styles.clearRow}>
          <button
            type="button"
            className="shell-button"
            onClick={() => setKeepDecidedSince(Date.now())}
          >
            Clear {decidedHere} decided
          </button>
        </p>
      )}

      {query.isPending ? (
        <LoadingCards />
      ) : query.isError && !cache ? (
        <div className={styles.empty} role="alert">
          <h2>The queue did not load</h2>
          <p>{query.error.message}</p>
          <p>
            <button type="button" className="shell-button" onClick={() => query.refetch()}>
              Try again
            </button>{" "}
            <a href="/sign-in?next=/queue">Sign in</a>
          </p>
        </div>
      ) : cards.length === 0 ? (
        <EmptyQueue filtered={filtered} status={filters.status} welcome={welcome} />
      ) : (
        <>
          <h2 className="visually-hidden">Cards</h2>
          <div
            ref={listRef}
            className={styles.list}
            style={{ height: virtualizer.getTotalSize() }}
            data-testid="queue-list"
            aria-label={`${cards.length} cards`}
            role="feed"
            aria-busy={connection === "connecting"}
          >
            {virtualizer.getVirtualItems().map((item) => {
              const batch = cards[item.index]!;
              return (
                <div
                  key={item.key}
                  data-index={item.index}
                  ref={virtualizer.measureElement}
                  className={styles.item}
                  data-held={batch.id === heldBatchId ? "" : undefined}
                  style={{
                    transform: `translateY(${item.start - scrollMargin}px)`,
                  }}
                  onFocusCapture={() => setSelectedId(batch.id)}
                >
                  {batch.id === heldBatchId && held.toast?.phase === "held" && (
                    <p className={styles.heldMark} data-testid="held-mark">
                      Approval held: <code>{held.toast.intent.label}</code> goes out when the
                      countdown ends
                    </p>
                  )}
                  <ReviewCard
                    ref={(handle: ReviewCardHandle | null) => {
                      if (handle) handles.current.set(batch.id, handle);
                      else handles.current.delete(batch.id);
                    }}
                    batch={batch}
                    viewer={viewer}
                    selected={batch.id === selected?.id && selectedId !== null}
                    onDecide={onDecide}
                    onDecideBatch={onDecideBatch}
                    onClaim={onClaim}
                    runHref={(runId) => `/runs/${runId}`}
                    timeZone={timeFormat.timeZone}
                    locale={timeFormat.locale}
                    hostControls={
                      batch.status === "pending" && (
                        <div className={styles.itemBar}>
                          <button
                            type="button"
                            className={`shell-button ${styles.notNow}`}
                            onClick={() => openChooser(batch.id)}
                            aria-keyshortcuts={shortcutsEnabled ? "s" : undefined}
                            data-testid={`not-now-${batch.id}`}
                          >
                            Not now…<span className="visually-hidden"> ({cardLabel(batch)})</span>
                          </button>
                          <SetAsideNote
                            marks={batch.setAside ?? []}
                            viewerId={viewer.id}
                            now={clock}
                            timeZone={timeFormat.timeZone}
                          />
                        </div>
                      )
                    }
                  />
                </div>
              );
            })}
          </div>
        </>
      )}
      <KeyboardHelp open={helpOpen} onClose={() => setHelpOpen(false)} enabled={shortcutsEnabled} />
      <SetAsideChooser
        batch={chooserFor ? (cache?.byId.get(chooserFor) ?? null) : null}
        now={clock}
        timeZone={timeFormat.timeZone}
        onChoose={(choice) => void chooseSetAside(choice)}
        onClose={() => {
          const batchId = chooserFor;
          setChooserFor(null);
          if (batchId) handles.current.get(batchId)?.focus();
        }}
      />
      <SetAsideToast
        toast={asideToast}
        timeZone={timeFormat.timeZone}
        raised={held.toast !== null}
        onUndo={(batchId) => void bringBackCard(batchId)}
        onDismiss={dismissAsideToast}
      />
      <UndoToast
        toast={held.toast}
        delayMs={held.delayMs}
        onUndo={undoHeld}
        shortcutsEnabled={shortcutsEnabled}
      />
    </div>
  );
}

/** The server's answer becomes the card's state at once, whoever won. */
function settle(client: ReturnType<typeof useQueryClient>, result: BatchResult): DecisionResult {
  const { decision, view } = toDecisionResult(result);
  if (view) storeBatch(client, view);
  return decision;
}

function LoadingCards() {
  return (
    <div role="status" aria-live="polite" data-testid="queue-loading">
      <span className="visually-hidden">Loading the queue…</span>
      {[0, 1, 2].map((i) => (
        <div key={i} className={styles.skeleton} aria-hidden="true" />
      ))}
    </div>
  );
}
