"use client";

import type { Ref } from "react";
import { conflictText, describeDecision, editorOf, reviewerName } from "./decision-text";
import { DiffView } from "./diff-view";
import { isRecord } from "./format";
import { EditedSummary, summaryOf } from "./plan-summary";
import styles from "./review-card.module.css";
import { revealInvisible } from "./reveal";
import type { Call } from "./types";
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

/**
 * Someone else moved first. Not a live region (its "4 s ago" ticks); the card announces the
 * conflict once, and focus lands here when the controls it replaced disappear.
 */
export function ConflictNotice({
  notice,
  call,
  now,
  viewerId,
  ref,
}: {
  notice: Notice;
  call: Call | undefined;
  now: () => number;
  viewerId?: string;
  ref?: Ref<HTMLDivElement>;
}) {
  const nowMs = useClock(now, true);
  return (
    <div
      ref={ref}
      tabIndex={-1}
      className={`${styles.notice} ${styles.toneWarning}`}
      data-testid="conflict-notice"
      data-code={notice.code}
    >
      <p className={styles.noticeHeadline} suppressHydrationWarning>
        {conflictText(notice.code, call, notice.message, nowMs, viewerId)}
      </p>
    </div>
  );
}
