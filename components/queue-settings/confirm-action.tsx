"use client";

import { useEffect, useRef, useState, type TransitionStartFunction } from "react";
import settings from "./queue-settings.module.css";

/**
 * A destructive action asked twice, in place: "Revoke…" turns into "Revoke now" and "Keep". The
 * caller keeps whether it is asking (a table's rows: `RowConfirm`). From the keyboard: the
 * question takes the focus on "Keep" (pressing Enter twice destroys nothing), Escape keeps, and
 * keeping gives the focus back to the first button; a screen reader hears the question as the
 * name of the pair ("Revoke the key of Billing bot?").
 */
export function ConfirmAction({
  verb,
  asking,
  pending,
  ariaLabel,
  onAsk,
  onKeep,
  onConfirm,
}: {
  /** what the action does, as its button says it: "Revoke", "Deactivate" */
  verb: string;
  asking: boolean;
  pending: boolean;
  /** names what the first button acts on, for screen readers: "Revoke the key of Billing bot" */
  ariaLabel: string;
  onAsk: () => void;
  onKeep: () => void;
  onConfirm: () => void;
}) {
  const askButton = useRef<HTMLButtonElement>(null);
  const keepButton = useRef<HTMLButtonElement>(null);
  // Where the focus goes when `asking` changes: only where this pair had it (another row's
  // question opening closes this one without taking the focus away from there).
  const focusNext = useRef<"keep" | "ask" | null>(null);
  useEffect(() => {
    const target = focusNext.current === "keep" ? keepButton : askButton;
    if (focusNext.current && target.current) {
      focusNext.current = null;
      target.current.focus();
    }
  }, [asking]);

  const keep = () => {
    focusNext.current = "ask";
    onKeep();
  };
  if (!asking) {
    return (
      <button
        ref={askButton}
        type="button"
        className={settings.danger}
        disabled={pending}
        onClick={() => {
          focusNext.current = "keep";
          onAsk();
        }}
        aria-label={ariaLabel}
      >
        {verb}…
      </button>
    );
  }
  return (
    <span
      role="group"
      aria-label={`${ariaLabel}?`}
      className={settings.confirmPair}
      onKeyDown={(event) => {
        if (event.key === "Escape" && !pending) {
          event.stopPropagation();
          keep();
        }
      }}
    >
      <button type="button" className={settings.danger} disabled={pending} onClick={onConfirm}>
        {verb} now
      </button>
      <button ref={keepButton} type="button" className={settings.secondary} onClick={keep}>
        Keep
      </button>
    </span>
  );
}

/** A table's one open question: which row asks, and the page's transition its actions run in. */
export type ConfirmRows = {
  asking: string | null;
  setAsking: (row: string | null) => void;
  transition: [boolean, TransitionStartFunction];
};

/** The question state of a table's `RowConfirm`s; `transition` is the page's `useTransition()`. */
export function useConfirmRows(transition: [boolean, TransitionStartFunction]): ConfirmRows {
  const [asking, setAsking] = useState<string | null>(null);
  return { asking, setAsking, transition };
}

/**
 * A row's destructive action (revoke a key, deactivate a person, disable a gateway), asked
 * twice: asking in one row closes the question of another. The action runs in the page's
 * transition (its other buttons wait while it runs); the question closes when it is done.
 */
export function RowConfirm({
  rows: { asking, setAsking, transition },
  row,
  verb,
  ariaLabel,
  onConfirm,
}: {
  /** the table's question state (useConfirmRows) */
  rows: ConfirmRows;
  /** the row's id */
  row: string;
  verb: string;
  ariaLabel: string;
  /** the action: a server action and the page's answer to it */
  onConfirm: () => Promise<void>;
}) {
  const [pending, startTransition] = transition;
  return (
    <ConfirmAction
      verb={verb}
      asking={asking === row}
      pending={pending}
      ariaLabel={ariaLabel}
      onAsk={() => setAsking(row)}
      onKeep={() => setAsking(null)}
      onConfirm={() =>
        startTransition(async () => {
          await onConfirm();
          setAsking(null);
        })
      }
    />
  );
}
