"use client";

import type { Ref } from "react";
import { conflictText, describeDecision, editorOf, reviewerName } from "./decision-text";
import { callLabels, isPlanCall } from "./labels";
import { attemptOf, batchAttemptOf, batchRaceText, raceText } from "./race-text";
import { KeptText } from "./unsent-draft";
import { DiffView } from "./diff-view";
import { isRecord } from "./format";
import { EditedSummary, summaryOf } from "./plan-summary";
import styles from "./review-card.module.css";
import { revealInvisible } from "./reveal";
import type { Batch, Call } from "./types";
import { useClock } from "./use-clock";
import type { Notice } from "./use-decisions";

const TONE = { approved: styles.toneApproved, rejected: styles.toneRejected };

/** Who decided what, when and why; for an approved edit, what the agent will run instead. */
export function DecisionNotice(props: {
  call: Call;
  label: string;
  /** the synthetic call of a plan batch: an edit is of its summary, shown as prose */
  isPlanCall?: boolean;
  now: () => number;
  viewerId?: string;
  /** a conflict notice above already says the headline */
  headlineShown?: boolean;
}) {
  const { call } = props;
  const nowMs = useClock(props.now, true);
  const decision = call.decision;
  if (!decision) return null;
  const { headline, reason, detail } = describeDecision(decision, nowMs, props.viewerId);
  const edited = decision.outcome === "approved" && isRecord(decision.editedArgs);
  const editedSummary = props.isPlanCall ? summaryOf(decision.editedArgs) : null;
  const tone = call.status === "expired" ? styles.toneMuted : TONE[decision.outcome];
  // A race notice above says who decided and when: with no reason, detail or edit to add, an
  // empty box would be all that is left (issue 26, item 1).
  if (props.headlineShown && !reason && !detail && !edited) return null;
  const by = decision.by ? reviewerName(decision.by, props.viewerId) : null;
  return (
    <div
      className={`${styles.notice} ${tone}`}
      data-testid="decision-notice"
      data-outcome={decision.outcome}
      data-source={decision.source}
    >
      {!props.headlineShown && (
        <p className={styles.noticeHeadline} suppressHydrationWarning>
          {headline}
        </p>
      )}
      {reason && props.headlineShown && by && (
        <p className={styles.noticeDetail}>{by === "you" ? "Your reason:" : `${by}'s reason:`}</p>
      )}
      {reason && <blockquote className={styles.reason}>{revealInvisible(reason)}</blockquote>}
      {detail && <p className={styles.noticeDetail}>{detail}</p>}
      {edited && editedSummary !== null ? (
        <EditedSummary
          lead={`Summary edited by ${reviewerName(editorOf(call), props.viewerId)}:`}
          summary={editedSummary}
          proposed={summaryOf(call.args) ?? ""}
        />
      ) : edited ? (
        <div className={styles.editedArgs}>
          <p className={styles.noticeDetail}>The agent runs the edited args:</p>
          <DiffView
            before={call.args}
            after={decision.editedArgs}
            label={`Edit approved for ${props.label}`}
          />
        </div>
      ) : null}
    </div>
  );
}

/** What the notice of a lost race says: the race sentence, or the older wording without a request. */
export function raceNoticeText(
  notice: Notice,
  batch: Batch,
  callId: string | null,
  nowMs: number,
  viewerId?: string,
): string {
  const request = notice.request;
  const { code, message } = notice;
  if (callId) {
    const call = batch.calls.find((c) => c.id === callId);
    if (!call) return conflictText(code, call, message, nowMs, viewerId);
    return callRaceText(notice, call, isPlanCall(batch, call), nowMs, viewerId);
  }
  if (!request || !("batchId" in request)) return message;
  return batchRaceText({
    attempt: batchAttemptOf(request),
    batch,
    code,
    serverMessage: message,
    nowMs,
    viewerId,
    labels: callLabels(batch),
    expectedRevisions: request.expectedRevisions,
  });
}

function callRaceText(
  notice: Notice,
  call: Call,
  plan: boolean,
  nowMs: number,
  viewerId?: string,
): string {
  const { request, code, message } = notice;
  if (!request || !("callId" in request)) return conflictText(code, call, message, nowMs, viewerId);
  return raceText({
    attempt: attemptOf(request, plan),
    call,
    code,
    serverMessage: message,
    nowMs,
    viewerId,
    isPlanCall: plan,
    expectedRevision: request.expectedRevision,
  });
}

/** What the reviewer sent that did not get through, as text they can copy; null for a plain approval. */
export function keptOf(
  request: Notice["request"],
  isPlan: boolean,
): { label: string; text: string; code: boolean } | null {
  if (!request) return null;
  if (request.outcome === "reject")
    return request.reason
      ? { label: "Your unsent reason", text: request.reason, code: false }
      : null;
  if (request.outcome === "edit") {
    const summary = request.editedArgs.summary;
    return isPlan && typeof summary === "string"
      ? { label: "Your unapplied summary", text: summary, code: false }
      : {
          label: "Your unapplied edit (JSON)",
          text: JSON.stringify(request.editedArgs, null, 2),
          code: true,
        };
  }
  return null;
}

/**
 * Someone else moved first: one sentence on what was decided, by whom, when, and what became of
 * the reviewer's own action, with what they typed kept below, copyable. Not a live region (its
 * "4 s ago" ticks); the card announces the same sentence once (its role="status"), and focus
 * lands here when the controls it replaced disappear.
 */
export function ConflictNotice({
  notice,
  call,
  isPlanCall: plan,
  now,
  viewerId,
  onDismiss,
  ref,
}: {
  notice: Notice;
  call: Call;
  isPlanCall: boolean;
  now: () => number;
  viewerId?: string;
  onDismiss?: () => void;
  ref?: Ref<HTMLDivElement>;
}) {
  const nowMs = useClock(now, true);
  const kept = keptOf(notice.request, plan);
  return (
    <div
      ref={ref}
      tabIndex={-1}
      className={`${styles.notice} ${styles.toneWarning}`}
      data-testid="conflict-notice"
      data-code={notice.code}
    >
      <p className={styles.noticeHeadline} data-testid="race-sentence" suppressHydrationWarning>
        {callRaceText(notice, call, plan, nowMs, viewerId)}
      </p>
      {kept && (
        <KeptText label={kept.label} text={kept.text} code={kept.code} onDismiss={onDismiss} />
      )}
    </div>
  );
}
