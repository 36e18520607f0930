"use client";

import { useEffect, useRef } from "react";
import type { Batch, SetAsideMark } from "@/components/review-card/types";
import {
  lastFifthBegins,
  MORNING,
  SET_ASIDE_CHOICES,
  setAsideUntil,
  type SetAsideChoice,
} from "@/lib/time/set-aside-times";
import styles from "./queue.module.css";

// "Not now" on the queue page (lib/set-aside): the chooser `s` opens, the toast that offers to
// undo, the list of the viewer's cards set aside, and the note others see on such a card.

export const CHOICE_LABELS: Record<SetAsideChoice, string> = {
  "15m": "15 minutes",
  "1h": "1 hour",
  tomorrow: `Tomorrow, ${MORNING}`,
};

/** The viewer's live set-aside of a batch, if any (one whose moment has passed is back). */
export function mineOf(batch: Batch, viewerId: string, now: number): SetAsideMark | undefined {
  return batch.setAside?.find((s) => s.by.id === viewerId && Date.parse(s.returnsAt) > now);
}

/** "10:15", "09:00 tomorrow" or "12 Mar, 09:00": when, in the viewer's zone. */
export function shortWhen(at: string | number, now: number, timeZone: string): string {
  const ms = typeof at === "number" ? at : Date.parse(at);
  const day = (t: number) =>
    new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(t); // prettier-ignore
  const time = new Intl.DateTimeFormat("en-GB", {
    timeZone,
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  }).format(ms);
  if (day(ms) === day(now)) return time;
  if (day(ms) === day(now + 86_400_000)) return `${time} tomorrow`;
  const date = new Intl.DateTimeFormat("en-GB", { timeZone, day: "numeric", month: "short" }).format(ms); // prettier-ignore
  return `${time} on ${date}`;
}

/** What a card is called in a sentence: its tools (or "the plan"). */
export function cardLabel(batch: Batch): string {
  if (batch.kind === "plan") return "the plan";
  const tools = [...new Set(batch.calls.map((c) => c.toolName))];
  return tools.length <= 2 ? tools.join(" and ") : `${tools[0]} and ${tools.length - 1} more`;
}

/**
 * The small chooser: three buttons in a native modal dialog (focus, Escape and the backdrop work
 * as everywhere else). Up and Down move between them (wrapping), Enter or a click picks one, and
 * 1, 2 or 3 pick at once. A choice its card's deadline would cut short says when it is back.
 */
export function SetAsideChooser({
  batch,
  now,
  timeZone,
  onChoose,
  onClose,
}: {
  batch: Batch | null;
  /** the time it was opened at */
  now: number;
  timeZone: string;
  onChoose: (choice: SetAsideChoice) => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const open = batch !== null;
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) {
      dialog.showModal();
      dialog.querySelector<HTMLButtonElement>("button[data-choice]")?.focus();
    }
    if (!open && dialog.open) dialog.close();
  }, [open]);

  const deadlineBack = batch
    ? lastFifthBegins({
        createdAt: Date.parse(batch.createdAt),
        expiresAt: Date.parse(batch.expiresAt),
      })
    : Infinity;
  // "tomorrow morning" is counted in the viewer's zone: the one every time here is shown in (their
  // own choice in Settings, else their browser's), and the one the server is sent
  const zone = timeZone;

  const onKeyDown = (event: React.KeyboardEvent<HTMLDialogElement>) => {
    const buttons = [
      ...(ref.current?.querySelectorAll<HTMLButtonElement>("button[data-choice]") ?? []),
    ];
    const index = buttons.indexOf(document.activeElement as HTMLButtonElement);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      const step = event.key === "ArrowDown" ? 1 : -1;
      buttons[(index + step + buttons.length) % buttons.length]?.focus();
    } else if (["1", "2", "3"].includes(event.key)) {
      event.preventDefault();
      onChoose(SET_ASIDE_CHOICES[Number(event.key) - 1]!);
    }
  };

  return (
    <dialog
      ref={ref}
      className={styles.chooser}
      aria-labelledby="set-aside-title"
      aria-describedby="set-aside-lead"
      onClose={onClose}
      onKeyDown={onKeyDown}
      data-testid="set-aside-chooser"
    >
      <h2 id="set-aside-title">Not now</h2>
      <p id="set-aside-lead" className={styles.helpNote}>
        {batch && (
          <>
            Set <code>{cardLabel(batch)}</code> aside: it leaves your queue, nobody else&apos;s, and
            nothing is decided. It comes back by itself, sooner if its deadline nears.
          </>
        )}
      </p>
      <ul className={styles.choices}>
        {SET_ASIDE_CHOICES.map((choice, index) => (
          <li key={choice}>
            <button
              type="button"
              className={`shell-button ${styles.choice}`}
              data-choice={choice}
              aria-keyshortcuts={String(index + 1)}
              onClick={() => onChoose(choice)}
            >
              <kbd aria-hidden="true">{index + 1}</kbd>
              <span>{CHOICE_LABELS[choice]}</span>
              {deadlineBack < setAsideUntil(choice, now, zone) && (
                <span className={styles.choiceNote}>
                  back at {shortWhen(deadlineBack, now, timeZone)}, as its deadline nears
                </span>
              )}
            </button>
          </li>
        ))}
      </ul>
      <p className={styles.chooserKeys}>
        <kbd>↑</kbd> <kbd>↓</kbd> and <kbd>Enter</kbd>, or <kbd>1</kbd> <kbd>2</kbd> <kbd>3</kbd>;{" "}
        <kbd>Esc</kbd> cancels.
      </p>
      <form method="dialog">
        <button className="shell-button" type="submit">
          Cancel
        </button>
      </form>
    </dialog>
  );
}

export type SetAsideToastState =
  | { phase: "set"; batchId: string; label: string; returnsAt: string; at: number }
  | { phase: "back"; label: string }
  | { phase: "failed"; text: string };

/** Says what was set aside until when, with Undo; or what came of an undo or a refusal. */
export function SetAsideToast({
  toast,
  timeZone,
  raised,
  onUndo,
  onDismiss,
}: {
  toast: SetAsideToastState | null;
  timeZone: string;
  /** another toast is showing at the bottom: sit above it */
  raised: boolean;
  onUndo: (batchId: string) => void;
  onDismiss: () => void;
}) {
  useEffect(() => {
    if (!toast) return;
    const timer = setTimeout(onDismiss, toast.phase === "set" ? 10_000 : 5_000);
    return () => clearTimeout(timer);
  }, [toast, onDismiss]);
  return (
    <div
      className={styles.toastRegion}
      data-raised={raised || undefined}
      role="status"
      aria-live="polite"
    >
      {toast && (
        <div
          className={styles.toast}
          data-testid="set-aside-toast"
          data-tone={toast.phase === "failed" ? "warn" : "ok"}
        >
          {toast.phase === "set" ? (
            <>
              <p className={styles.toastText}>
                Set aside <code>{toast.label}</code> until{" "}
                {shortWhen(toast.returnsAt, toast.at, timeZone)}.
              </p>
              <button type="button" className="shell-button" onClick={() => onUndo(toast.batchId)}>
                Undo
              </button>
            </>
          ) : toast.phase === "back" ? (
            <p className={styles.toastText}>
              <code>{toast.label}</code> is back in your queue.
            </p>
          ) : (
            <p className={styles.toastText}>{toast.text}</p>
          )}
        </div>
      )}
    </div>
  );
}

/** The viewer's cards set aside, soonest back first, each with "Bring back". */
export function SetAsideList({
  batches,
  viewerId,
  now,
  timeZone,
  onBringBack,
}: {
  batches: Batch[];
  viewerId: string;
  now: number;
  timeZone: string;
  onBringBack: (batchId: string) => void;
}) {
  if (batches.length === 0) return null;
  return (
    <section
      className={styles.setAside}
      aria-labelledby="set-aside-list-title"
      data-testid="set-aside-list"
    >
      <h2 id="set-aside-list-title" className={styles.setAsideTitle}>
        Set aside by you ({batches.length})
      </h2>
      <ul>
        {batches.map((batch) => {
          const mine = mineOf(batch, viewerId, now)!;
          return (
            <li key={batch.id}>
              <span>
                <code>{cardLabel(batch)}</code> from {batch.agent.name} · back at{" "}
                {shortWhen(mine.returnsAt, now, timeZone)}
                {mine.returnsAt < mine.until && " (its deadline nears)"}
              </span>
              <button type="button" className="shell-button" onClick={() => onBringBack(batch.id)}>
                Bring back<span className="visually-hidden"> {cardLabel(batch)} now</span>
              </button>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** On a card others set aside: who, and until when (it stays in this viewer's queue). */
export function SetAsideNote({
  marks,
  viewerId,
  now,
  timeZone,
}: {
  marks: SetAsideMark[];
  viewerId: string;
  now: number;
  timeZone: string;
}) {
  const others = marks.filter((m) => m.by.id !== viewerId && Date.parse(m.returnsAt) > now);
  if (others.length === 0) return null;
  return (
    <p className={styles.setAsideNote} data-testid="set-aside-note">
      Set aside by{" "}
      {others.map((m) => `${m.by.name} until ${shortWhen(m.returnsAt, now, timeZone)}`).join(", ")}
    </p>
  );
}
