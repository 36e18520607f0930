"use client";

import {
  useCallback,
  useEffect,
  useId,
  useImperativeHandle,
  useLayoutEffect,
  useMemo,
  useRef,
  type ReactNode,
  type Ref,
} from "react";
import { BatchControls, BatchNotice } from "./batch-controls";
import { CallRow, type CallRowHandle } from "./call-row";
import { CardHeader, PlanSection, type HeadingLevel } from "./card-header";
import { ClaimControl, useLiveClaim } from "./claim-control";
import { Countdown } from "./countdown";
import { summarizeVotes } from "./decision-text";
import { callLabels, isPlanCall } from "./labels";
import { raceNoticeText } from "./notices";
import styles from "./review-card.module.css";
import { TimeFormatContext } from "./time-context";
import type {
  Batch,
  BatchDecisionRequest,
  Call,
  DecisionRequest,
  DecisionResult,
  ReviewCardHandle,
  Viewer,
} from "./types";
import { useDeadlinePassed } from "./use-clock";
import { useDecisions, type Settled } from "./use-decisions";

export type ReviewCardProps = {
  batch: Batch;
  /** the signed-in reviewer (to show "you", hide controls for own votes) */
  viewer?: Viewer;
  /** without it the card is read-only */
  onDecide?: (req: DecisionRequest) => Promise<DecisionResult>;
  onDecideBatch?: (req: BatchDecisionRequest) => Promise<DecisionResult>;
  /** claims (true) or releases (false) the batch for the viewer: "I'm reviewing this"; without it no toggle */
  onClaim?: (batchId: string, claim: boolean) => Promise<DecisionResult>;
  /** href builder for the run link; default none */
  runHref?: (runId: string) => string;
  /** the clock for countdowns and relative times; default Date.now (tests pass a fixed clock) */
  now?: () => number;
  /** the card is the keyboard-selected one in a list */
  selected?: boolean;
  /** imperative handle for keyboard shortcuts from the list */
  ref?: Ref<ReviewCardHandle>;
  compact?: boolean;
  /** the level of the card's heading in the host page; default 3 */
  headingLevel?: HeadingLevel;
  /** force a palette; by default the card follows the page (prefers-color-scheme, data-theme) */
  theme?: "light" | "dark";
  /** the card's place in a list (1-based), for role="feed" hosts: aria-posinset / aria-setsize */
  position?: { index: number; total: number };
  /**
   * the IANA zone the exact times (tooltips) are written in, e.g. "Europe/Berlin"; default the
   * browser's. A host that renders the card on the server passes the viewer's zone here.
   */
  timeZone?: string;
  /** the BCP 47 locale times and costs are written in; default the browser's */
  locale?: string;
  /**
   * the host's own controls and notes for this card, shown in its header after the claim
   * control (the queue page's "Not now"): inside the card, so a role="feed" host's items hold
   * only articles
   */
  hostControls?: ReactNode;
};

export function ReviewCard({
  batch: batchProp,
  viewer,
  onDecide,
  onDecideBatch,
  onClaim,
  runHref,
  now = Date.now,
  selected = false,
  ref,
  compact = false,
  headingLevel = 3,
  theme,
  position,
  timeZone,
  locale,
  hostControls,
}: ReviewCardProps) {
  // One object per zone and locale, so the context does not re-render every time reader.
  const timeFormat = useMemo(() => ({ timeZone, locale }), [timeZone, locale]);
  const decisions = useDecisions({
    batch: batchProp,
    onDecide,
    onDecideBatch,
    raceSentence: (notice, current, callId) =>
      raceNoticeText(notice, current, callId, now(), viewer?.id),
  });
  const batch = decisions.shown;
  const headingId = useId();
  const articleRef = useRef<HTMLElement>(null);
  const rows = useRef(new Map<string, CallRowHandle>());
  const focusCardAfterCommit = useRef(false);

  const pending = batch.status === "pending";
  const deadlinePassed = useDeadlinePassed(batch.expiresAt, now, pending);
  const open = pending && !deadlinePassed;
  const claim = useLiveClaim(batch, now);
  // In a lock queue another reviewer's live claim takes the decisions away (the server would refuse).
  const lockedOut = claim !== null && claim.locked && claim.by.id !== viewer?.id;
  const labels = callLabels(batch);
  // a plan sent with its steps as calls: the whole plan is decided by the batch controls
  const planWithSteps = batch.kind === "plan" && !batch.calls.some((c) => isPlanCall(batch, c));
  const votedByViewer = (call: Call) => summarizeVotes(call, viewer?.id).viewerVoted;
  const actionable = (call: Call) =>
    open && !lockedOut && !!onDecide && call.status === "pending" && !votedByViewer(call);
  // The batch endpoint names every call and refuses if any is settled or already has our vote.
  // Without onDecide the card is read-only, whatever else the host passes.
  const canDecideAll =
    open &&
    !lockedOut &&
    !!onDecide &&
    !!onDecideBatch &&
    (batch.calls.length > 1 || (planWithSteps && batch.calls.length > 0)) &&
    batch.calls.every((call) => call.status === "pending" && !votedByViewer(call));

  useImperativeHandle(ref, () => {
    // Shortcuts act on the call that holds focus, else on the first call still open (in the
    // card's order: the DOM's, since rows re-register their handles as they re-render).
    const target = () => {
      const rowElements = articleRef.current?.querySelectorAll("[data-call-id]") ?? [];
      const handles = [...rowElements]
        .map((row) => rows.current.get(row.getAttribute("data-call-id") ?? ""))
        .filter((handle): handle is CallRowHandle => !!handle?.actionable);
      const active = typeof document === "undefined" ? null : document.activeElement;
      return handles.find((handle) => handle.contains(active)) ?? handles[0];
    };
    return {
      approve: () => target()?.approve(),
      nextApproval: () => {
        const approval = target()?.approval();
        return approval ? { batchId: batchProp.id, ...approval } : null;
      },
      reject: () => target()?.reject(),
      edit: () => target()?.edit(),
      focus: () => articleRef.current?.focus(),
    };
  }, [batchProp.id]);

  // A "Reject all" reason being typed when the controls go (a call settled meanwhile) is kept,
  // unless the viewer settled every call (their own decision: nothing was lost).
  const batchDraft = useRef<BatchDecisionRequest | null>(null);
  const keepBatchDraft = decisions.keepBatchDraft;
  const lostDraft =
    !canDecideAll &&
    batch.calls.some(
      (call) =>
        call.status === "pending" ||
        call.decision?.source !== "reviewer" ||
        call.decision.by?.id !== viewer?.id,
    );
  useEffect(() => {
    const draft = batchDraft.current;
    if (!lostDraft || !draft) return;
    batchDraft.current = null;
    keepBatchDraft(draft);
  }, [lostDraft, keepBatchDraft]);
  const onBatchDraft = useCallback((draft: BatchDecisionRequest | null) => {
    batchDraft.current = draft;
  }, []);

  useLayoutEffect(() => {
    if (!focusCardAfterCommit.current) return;
    focusCardAfterCommit.current = false;
    articleRef.current?.focus();
  });

  const onBatchSettled = (settled: Settled) => {
    const active = document.activeElement;
    if (settled !== "error" && (!active || active === document.body)) {
      focusCardAfterCommit.current = true;
    }
  };

  const className = [
    styles.card,
    selected ? styles.selected : "",
    compact ? styles.compact : "",
  ].join(" ");
  const ListTag = batch.calls.length > 1 ? "ol" : "div";

  return (
    <TimeFormatContext value={timeFormat}>
      <article
        ref={articleRef}
        className={className}
        aria-labelledby={headingId}
        tabIndex={-1}
        data-testid="review-card"
        data-batch-id={batch.id}
        data-status={batch.status}
        data-selected={selected || undefined}
        data-theme={theme}
        aria-posinset={position?.index}
        aria-setsize={position?.total}
      >
        <CardHeader
          batch={batch}
          headingId={headingId}
          headingLevel={headingLevel}
          runHref={runHref}
          now={now}
        >
          <ClaimControl
            batch={batch}
            claim={claim}
            viewer={viewer}
            open={open}
            onClaim={onClaim}
            now={now}
          />
          {hostControls}
        </CardHeader>
        {batch.plan && (
          <PlanSection plan={batch.plan} compact={compact} headingLevel={headingLevel} />
        )}
        {pending && <Countdown expiresAt={batch.expiresAt} onTimeout={batch.onTimeout} now={now} />}
        {batch.status === "cancelled" && (
          <p className={styles.muted}>
            The agent cancelled this request{batch.cancelReason ? `: ${batch.cancelReason}` : "."}
          </p>
        )}
        <ListTag className={styles.calls}>
          {batch.calls.map((call, index) => (
            <CallRow
              key={call.id}
              ref={(handle) => {
                if (handle) rows.current.set(call.id, handle);
                else rows.current.delete(call.id);
              }}
              as={ListTag === "ol" ? "li" : "div"}
              call={call}
              label={labels[index] ?? call.toolName}
              isPlanCall={isPlanCall(batch, call)}
              showSummary={batch.calls.length > 1 || batch.plan !== null}
              showStatus={batch.calls.length > 1}
              actionable={actionable(call)}
              busy={decisions.busy[call.id]}
              notice={decisions.notices[call.id]}
              onDismissNotice={() => decisions.dismiss(call.id)}
              decide={onDecide ? decisions.decide : undefined}
              viewerId={viewer?.id}
              now={now}
              compact={compact}
            />
          ))}
        </ListTag>
        {decisions.batchNotice && (
          <BatchNotice
            notice={decisions.batchNotice}
            batch={batch}
            busy={decisions.batchBusy}
            canDecide={open && !lockedOut && !!onDecide}
            decideRest={decisions.decideRest}
            onDismiss={() => decisions.dismiss(null)}
            onSettled={onBatchSettled}
            now={now}
            viewerId={viewer?.id}
          />
        )}
        {canDecideAll && (
          <BatchControls
            batch={batch}
            busy={decisions.batchBusy}
            decideBatch={decisions.decideBatch}
            onSettled={onBatchSettled}
            onDraft={onBatchDraft}
          />
        )}
        {/* One polite announcement per outcome; the ticking texts above are deliberately not live. */}
        <p role="status" className={styles.visuallyHidden}>
          {decisions.announcement}
        </p>
      </article>
    </TimeFormatContext>
  );
}
