"use client";

import { useEffect, useRef } from "react";
import styles from "./queue.module.css";

export const SHORTCUTS: [string, string][] = [
  ["j", "Next card"],
  ["k", "Previous card"],
  ["a", "Approve the selected card's next pending call, after 5 s (undo with z)"],
  ["z", "Undo the approval still waiting to be sent"],
  ["r", "Reject: opens the reason field"],
  ["e", "Edit the arguments"],
  [
    "s",
    "Not now: set the card aside for 15 min, 1 h or until tomorrow 09:00 (↑ ↓ Enter, or 1 2 3)",
  ],
  ["?", "Show or hide these keys"],
];

/** Keys with a modifier or in a field: WCAG 2.1.4 does not cover them, the setting leaves them on. */
const ALWAYS: [string, string][] = [
  ["Ctrl+Enter", "Send a reject reason (⌘+Enter on a Mac; Enter adds a line)"],
  ["Esc", "Close this help, or cancel a reason or an edit"],
];

/** The `?` sheet: a native modal dialog, so focus and Escape work as everywhere else. */
export function KeyboardHelp({
  open,
  onClose,
  enabled,
}: {
  open: boolean;
  onClose: () => void;
  /** the person's setting: off, the sheet says the keys do nothing and where to turn them on */
  enabled: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);

  return (
    <dialog
      ref={ref}
      className={styles.help}
      aria-labelledby="keyboard-help-title"
      onClose={onClose}
      data-testid="keyboard-help"
    >
      <h2 id="keyboard-help-title">Keyboard shortcuts</h2>
      {enabled ? (
        <p className={styles.helpNote}>
          A keyed approval waits 5 seconds before it is sent; <kbd>z</kbd> or Undo cancels it.
          Buttons approve at once. <a href="/settings">Turn single-key shortcuts off</a>.
        </p>
      ) : (
        <p className={styles.helpNote} data-testid="shortcuts-off-note">
          <strong>Single-key shortcuts are off</strong> for you: these keys do nothing. Use the
          buttons, or <a href="/settings">turn them on in Settings</a>.
        </p>
      )}
      <KeyList
        keys={SHORTCUTS}
        label={enabled ? "Single keys" : "Single keys (off)"}
        off={!enabled}
      />
      <KeyList keys={ALWAYS} label="In a reason or an editor, and always" off={false} />
      <form method="dialog">
        <button className="shell-button" type="submit">
          Close
        </button>
      </form>
    </dialog>
  );
}

function KeyList({ keys, label, off }: { keys: [string, string][]; label: string; off: boolean }) {
  return (
    <>
      <h3 className={styles.helpGroup}>{label}</h3>
      <dl data-off={off || undefined}>
        {keys.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
    </>
  );
}
