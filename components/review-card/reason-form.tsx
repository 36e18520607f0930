"use client";

import { useEffect, useId, useRef, useState, type KeyboardEvent } from "react";
import styles from "./review-card.module.css";

export type ReasonFormProps = {
  /** "Reason for rejecting refund_order" */
  label: string;
  value: string;
  onChange: (value: string) => void;
  onSubmit: (reason: string) => void;
  onCancel: () => void;
  busy: boolean;
  submitLabel: string;
  busyLabel: string;
  submitAriaLabel: string;
  testIds: { reason: string; confirm: string };
};

/**
 * A required reason: Ctrl+Enter (⌘+Enter on a Mac) sends, Enter adds a line (a reason may need
 * several), Escape cancels. One behaviour, the one the README documents.
 */
export function ReasonForm(props: ReasonFormProps) {
  const id = useId();
  const fieldRef = useRef<HTMLTextAreaElement>(null);
  const [missing, setMissing] = useState(false);

  useEffect(() => {
    fieldRef.current?.focus();
  }, []);

  function submit() {
    const reason = props.value.trim();
    if (!reason) {
      setMissing(true);
      fieldRef.current?.focus();
      return;
    }
    if (!props.busy) props.onSubmit(reason);
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Escape") {
      event.preventDefault();
      props.onCancel();
    } else if (
      event.key === "Enter" &&
      (event.ctrlKey || event.metaKey) &&
      !event.nativeEvent.isComposing
    ) {
      event.preventDefault();
      submit();
    }
  }

  return (
    <form
      className={styles.form}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label htmlFor={`${id}-reason`} className={styles.formLabel}>
        {props.label} <span className={styles.muted}>(required; the agent sees it)</span>
      </label>
      <textarea
        ref={fieldRef}
        id={`${id}-reason`}
        className={styles.textarea}
        data-testid={props.testIds.reason}
        rows={3}
        value={props.value}
        aria-invalid={missing || undefined}
        aria-describedby={missing ? `${id}-missing` : `${id}-hint`}
        onChange={(event) => {
          props.onChange(event.target.value);
          if (event.target.value.trim()) setMissing(false);
        }}
        onKeyDown={onKeyDown}
      />
      {missing ? (
        <p id={`${id}-missing`} className={styles.errorText}>
          Give a reason before rejecting.
        </p>
      ) : (
        <p id={`${id}-hint`} className={`${styles.hint} ${styles.keyHint}`}>
          Ctrl+Enter (⌘+Enter) to send · Enter for a new line · Esc to cancel
        </p>
      )}
      <div className={styles.actions}>
        <button
          type="submit"
          className={`${styles.button} ${styles.buttonDanger}`}
          data-testid={props.testIds.confirm}
          disabled={props.busy}
          aria-label={props.busy ? undefined : props.submitAriaLabel}
        >
          {props.busy ? props.busyLabel : props.submitLabel}
        </button>
        <button
          type="button"
          className={styles.button}
          onClick={props.onCancel}
          disabled={props.busy}
        >
          Cancel
        </button>
      </div>
    </form>
  );
}
