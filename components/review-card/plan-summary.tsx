"use client";

import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { isRecord } from "./format";
import styles from "./review-card.module.css";
import { EditActions } from "./edit-actions";
import { revealInvisible } from "./reveal";

// A plan batch's reviewer may change only the plan's summary (the server's input schema holds
// every other part to what the agent proposed), so its edit is prose, not JSON.

/** The server's limit, read from the plan call's input schema; 4000 if it does not say. */
export function summaryLimit(inputSchema: Record<string, unknown> | null): number {
  const properties = inputSchema?.properties;
  const summary = isRecord(properties) ? properties.summary : undefined;
  const max = isRecord(summary) ? summary.maxLength : undefined;
  return typeof max === "number" && Number.isInteger(max) && max > 0 ? max : 4000;
}

/** The plan's summary in a call's args (or an edit of them), if it has one. */
export function summaryOf(args: unknown): string | null {
  return isRecord(args) && typeof args.summary === "string" ? args.summary : null;
}

// JSON Schema's maxLength counts code points, not UTF-16 units: an emoji is one character.
const length = (text: string) => [...text].length;

type Check =
  | { kind: "valid"; summary: string; unchanged: boolean }
  | { kind: "empty" }
  | { kind: "tooLong"; over: number };

function check(text: string, original: string, max: number): Check {
  const summary = text.trim();
  if (!summary) return { kind: "empty" };
  if (length(summary) > max) return { kind: "tooLong", over: length(summary) - max };
  return { kind: "valid", summary, unchanged: summary === original.trim() };
}

export type SummaryEditorProps = {
  /** the agent's summary: an edit must differ from it */
  original: string;
  /** where editing starts: a pending edit's summary if there is one, else the original */
  initial: string;
  maxLength: number;
  busy: boolean;
  onSubmit: (summary: string) => void;
  onCancel: () => void;
  /** the remember-scope chooser, rendered beside the submit button */
  scopeControl?: ReactNode;
  /** the text as typed, so it can be kept if the plan is decided elsewhere mid-edit */
  onTextChange?: (text: string) => void;
};

/** Edits a plan's summary: required, at most `maxLength` characters; Ctrl+Enter sends, Esc cancels. */
export function SummaryEditor(props: SummaryEditorProps) {
  const id = useId();
  const fieldRef = useRef<HTMLTextAreaElement>(null);
  const [text, setText] = useState(props.initial);
  const result = check(text, props.original, props.maxLength);
  const canSubmit = result.kind === "valid" && !result.unchanged && !props.busy;

  useEffect(() => {
    fieldRef.current?.focus();
  }, []);

  const submit = () => {
    if (canSubmit) props.onSubmit(result.summary);
  };
  const problem =
    result.kind === "empty"
      ? "The summary cannot be empty."
      : result.kind === "tooLong"
        ? `The summary is ${result.over} character${result.over === 1 ? "" : "s"} too long (at most ${props.maxLength}).`
        : null;
  const describedBy = problem ? `${id}-error` : `${id}-hint`;

  return (
    <form
      className={styles.form}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label htmlFor={`${id}-summary`} className={styles.formLabel}>
        Edit the plan&apos;s summary{" "}
        <span className={styles.muted}>
          (the agent receives it; the rest of the plan stays as proposed)
        </span>
      </label>
      <textarea
        ref={fieldRef}
        id={`${id}-summary`}
        className={styles.textarea}
        data-testid="summary-editor"
        value={text}
        rows={Math.min(12, Math.max(3, text.split("\n").length + 1))}
        aria-invalid={problem ? true : undefined}
        aria-describedby={describedBy}
        onChange={(event) => {
          setText(event.target.value);
          props.onTextChange?.(event.target.value);
        }}
        onKeyDown={(event) => {
          if (event.key === "Escape") {
            event.preventDefault();
            props.onCancel();
          } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
            event.preventDefault();
            submit();
          }
        }}
      />
      {problem ? (
        <p id={`${id}-error`} className={styles.editorError} data-testid="editor-error">
          {problem}
        </p>
      ) : (
        <p id={`${id}-hint`} className={styles.hint}>
          {length(text.trim())} of {props.maxLength} characters
          <span className={styles.keyHint}> · Ctrl+Enter to approve the edit · Esc to cancel</span>
        </p>
      )}
      <EditActions
        label="Approve with this summary"
        ariaLabel="Approve the plan with the edited summary"
        canSubmit={canSubmit}
        busy={props.busy}
        scopeControl={props.scopeControl}
        onCancel={props.onCancel}
      />
    </form>
  );
}

/** A reviewer's summary, as prose, with the agent's own below it for comparison. */
export function EditedSummary(props: { lead: string; summary: string; proposed: string }) {
  return (
    <div className={styles.editedArgs} data-testid="edited-summary">
      <p className={styles.noticeDetail}>{props.lead}</p>
      <blockquote className={styles.reason}>{revealInvisible(props.summary)}</blockquote>
      <p className={`${styles.muted} ${styles.prose}`}>
        The agent proposed:{" "}
        <span data-testid="proposed-summary">{revealInvisible(props.proposed)}</span>
      </p>
    </div>
  );
}
