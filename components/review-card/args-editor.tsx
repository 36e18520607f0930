"use client";

import {
  useDeferredValue,
  useEffect,
  useId,
  useMemo,
  useRef,
  useState,
  type ReactNode,
} from "react";
import { DiffView } from "./diff-view";
import { isRecord } from "./format";
import { parseJsonText } from "./json-parse";
import { prettyJson } from "./line-diff";
import styles from "./review-card.module.css";
import { compileSchema, type SchemaIssue } from "./schema-check";
import { EditActions } from "./edit-actions";

type Validation =
  | { kind: "valid"; value: Record<string, unknown>; unchanged: boolean }
  | { kind: "syntax"; message: string }
  | { kind: "shape"; message: string }
  | { kind: "schema"; issues: SchemaIssue[] };

export type ArgsEditorProps = {
  /** the tool's label, for names: "refund_order" */
  label: string;
  /** the agent's args: what the diff compares against */
  original: Record<string, unknown>;
  /** where editing starts: a pending edit if there is one, else the original */
  initial: Record<string, unknown>;
  inputSchema: Record<string, unknown> | null;
  busy: boolean;
  onSubmit: (editedArgs: Record<string, unknown>) => void;
  onCancel: () => void;
  /** the remember-scope chooser, rendered beside the submit button */
  scopeControl?: ReactNode;
  /** every change of the text, so the host keeps it if the call is decided elsewhere meanwhile */
  onTextChange?: (text: string) => void;
};

/** A JSON editor for the args: validated as typed (syntax, then the tool's schema), with a diff. */
export function ArgsEditor(props: ArgsEditorProps) {
  const { original, inputSchema } = props;
  const id = useId();
  const fieldRef = useRef<HTMLTextAreaElement>(null);
  const [text, setText] = useState(() => prettyJson(props.initial));
  // Validation trails typing on big args instead of blocking each keystroke.
  const checkedText = useDeferredValue(text);
  const schema = useMemo(() => (inputSchema ? compileSchema(inputSchema) : null), [inputSchema]);
  const originalText = useMemo(() => prettyJson(original), [original]);

  const validation = useMemo((): Validation => {
    const parsed = parseJsonText(checkedText);
    if (!parsed.ok) return { kind: "syntax", message: `Invalid JSON: ${parsed.message}` };
    if (!isRecord(parsed.value)) {
      return { kind: "shape", message: "The args must be a JSON object: { … }" };
    }
    const issues = schema?.usable ? schema.check(parsed.value) : [];
    if (issues.length > 0) return { kind: "schema", issues };
    return {
      kind: "valid",
      value: parsed.value,
      unchanged: prettyJson(parsed.value) === originalText,
    };
  }, [checkedText, schema, originalText]);

  useEffect(() => {
    fieldRef.current?.focus();
  }, []);

  const current = checkedText === text;
  const canSubmit = current && validation.kind === "valid" && !validation.unchanged && !props.busy;
  const submit = () => {
    if (canSubmit) props.onSubmit(validation.value);
  };
  const errorId = `${id}-error`;
  const invalid = validation.kind !== "valid";
  const lines = text.split("\n").length;

  return (
    <form
      className={styles.form}
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <label htmlFor={`${id}-args`} className={styles.formLabel}>
        Edit the args of <code>{props.label}</code>{" "}
        <span className={styles.muted}>
          (JSON{schema?.usable ? ", checked against the tool's schema" : ""})
        </span>
      </label>
      <textarea
        ref={fieldRef}
        id={`${id}-args`}
        className={`${styles.textarea} ${styles.code}`}
        data-testid="args-editor"
        value={text}
        rows={Math.min(24, Math.max(6, lines + 1))}
        spellCheck={false}
        autoCapitalize="off"
        autoCorrect="off"
        aria-invalid={invalid || undefined}
        aria-describedby={invalid ? errorId : `${id}-hint`}
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
      {invalid ? (
        <div id={errorId} className={styles.editorError} data-testid="editor-error">
          {validation.kind === "schema" ? (
            <>
              <p>The edited args do not match the tool&apos;s schema:</p>
              <ul>
                {validation.issues.map((issue, index) => (
                  <li key={index}>
                    <code>{issue.path}</code> {issue.message}
                  </li>
                ))}
              </ul>
            </>
          ) : (
            <p>{validation.message}</p>
          )}
        </div>
      ) : (
        <p id={`${id}-hint`} className={`${styles.hint} ${styles.keyHint}`}>
          Ctrl+Enter to approve the edit · Esc to cancel
        </p>
      )}
      {schema && !schema.usable && (
        <p className={styles.hint}>
          The tool&apos;s schema could not be read here ({schema.problem}); the server checks the
          edit.
        </p>
      )}
      {validation.kind === "valid" && (
        <DiffView before={original} after={validation.value} label={`Changes to ${props.label}`} />
      )}
      <EditActions
        label="Approve edited"
        ariaLabel={`Approve edited ${props.label}`}
        canSubmit={canSubmit}
        busy={props.busy}
        scopeControl={props.scopeControl}
        onCancel={props.onCancel}
      />
    </form>
  );
}
