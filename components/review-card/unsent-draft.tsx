"use client";

import { useId, useState, type ReactNode, type Ref } from "react";
import { describeDecision } from "./decision-text";
import styles from "./review-card.module.css";
import type { Call } from "./types";

export type Draft = { kind: "reason" | "edit" | "summary"; text: string };

/** What the reviewer was doing, and what the kept text is called, for each kind of draft. */
const DRAFT_WORDS: Record<Draft["kind"], { doing: string; label: string }> = {
  reason: { doing: "writing a reason to reject it", label: "Your unsent reason" },
  edit: { doing: "editing its arguments", label: "Your unsent edit (JSON)" },
  summary: { doing: "editing the plan's summary", label: "Your unsent summary" },
};

/**
 * The call was decided (or closed) elsewhere while this reviewer had a reason or an edit open:
 * the form goes, but what they typed stays, read-only and copyable, with who decided what, so
 * nothing vanishes silently (issue 18, item 8).
 */
export function UnsentDraft({
  call,
  draft,
  viewerId,
  onDismiss,
  ref,
}: {
  call: Call;
  draft: Draft;
  viewerId?: string;
  onDismiss: () => void;
  ref?: Ref<HTMLDivElement>;
}) {
  const what = DRAFT_WORDS[draft.kind].doing;
  // No "N s ago" here: the row right above shows the decision with its time, and a second clock
  // read a moment later said "1 s ago" above "0 s ago" (issue 26, item 14).
  const by = call.decision ? describeDecision(call.decision, null, viewerId).headline : null;
  const headline = by
    ? `${by} while you were ${what}. Yours was not sent.`
    : call.status === "pending"
      ? `You can no longer decide this call (its deadline passed or another reviewer holds it) while you were ${what}. Yours was not sent.`
      : `This call is ${call.status} now; it closed while you were ${what}. Yours was not sent.`;
  return (
    <div
      ref={ref}
      tabIndex={-1}
      role="alert"
      className={`${styles.notice} ${styles.toneWarning}`}
      data-testid="unsent-draft"
      data-kind={draft.kind}
    >
      <p className={styles.noticeHeadline} suppressHydrationWarning>
        {headline}
      </p>
      <KeptText
        label={DRAFT_WORDS[draft.kind].label}
        text={draft.text}
        code={draft.kind === "edit"}
        onDismiss={onDismiss}
      />
    </div>
  );
}

/**
 * What a reviewer typed and did not get through, read-only and copyable, with a Dismiss: kept
 * under a decision made elsewhere (UnsentDraft) and under a lost race (notices.tsx).
 */
export function KeptText(props: {
  label: string;
  text: string;
  /** JSON: shown in the code font */
  code?: boolean;
  onDismiss?: () => void;
  children?: ReactNode;
}) {
  const id = useId();
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  const kept = props.text.trim() !== "";
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setCopied("yes");
    } catch {
      setCopied("no");
    }
  };
  return (
    <>
      {kept && (
        <>
          <label htmlFor={`${id}-text`} className={styles.formLabel}>
            {props.label}
          </label>
          <textarea
            id={`${id}-text`}
            className={`${styles.textarea} ${props.code ? styles.code : ""}`}
            data-testid="unsent-draft-text"
            readOnly
            rows={Math.min(12, props.text.split("\n").length + 1)}
            value={props.text}
          />
        </>
      )}
      {(kept || props.children || props.onDismiss) && (
        <div className={styles.actions}>
          {props.children}
          {kept && (
            <button type="button" className={styles.button} onClick={() => void copy()}>
              Copy
            </button>
          )}
          {props.onDismiss && (
            <button type="button" className={styles.button} onClick={props.onDismiss}>
              Dismiss
            </button>
          )}
          <span className={styles.muted} aria-live="polite">
            {copied === "yes" ? "Copied." : copied === "no" ? "Copy failed: select the text." : ""}
          </span>
        </div>
      )}
    </>
  );
}
