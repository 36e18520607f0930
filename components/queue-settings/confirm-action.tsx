"use client";

import {
  createContext,
  useContext,
  useEffect,
  useRef,
  useState,
  type ReactNode,
  type TransitionStartFunction,
} from "react";
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

/** Which row of a table is asking its question: at most one at a time. */
const AskingRow = createContext<{
  asking: string | null;
  setAsking: (row: string | null) => void;
} | null>(null);

/** Holds the one open question of the `RowConfirm`s inside it (a table's rows). */
export function ConfirmRows({ children }: { children: ReactNode }) {
  const [asking, setAsking] = useState<string | null>(null);
  return <AskingRow.Provider value={{ asking, setAsking }}>{children}</AskingRow.Provider>;
}

/**
 * A row's destructive action (revoke a key, deactivate a person, disable a gateway), asked
 * twice: asking in one row closes the question of another. The action runs in the page's
 * transition (its other buttons wait while it runs); the question closes when it is done.
 */
export function RowConfirm({
  row,
  verb,
  ariaLabel,
  transition: [pending, startTransition],
  onConfirm,
}: {
  /** the row's id */
  row: string;
  verb: string;
  ariaLabel: string;
  /** the page's `useTransition()` */
  transition: [boolean, TransitionStartFunction];
  /** the action: a server action and the page's answer to it */
  onConfirm: () => Promise<void>;
}) {
  const rows = useContext(AskingRow);
  if (!rows) throw new Error("RowConfirm is used inside ConfirmRows.");
  const { asking, setAsking } = rows;
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
