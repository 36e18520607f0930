"use client";

import { useEffect, useRef } from "react";
import styles from "./queue.module.css";

export const SHORTCUTS: [string, string][] = [
  ["j", "Next card"],
  ["k", "Previous card"],
  ["a", "Approve the selected card's next pending call"],
  ["r", "Reject: opens the reason field"],
  ["e", "Edit the arguments"],
  ["?", "Show or hide these keys"],
  ["Esc", "Close this help"],
];

/** The `?` sheet: a native modal dialog, so focus and Escape work as everywhere else. */
export function KeyboardHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
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
      <dl>
        {SHORTCUTS.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <form method="dialog">
        <button className="shell-button" type="submit">
          Close
        </button>
      </form>
    </dialog>
  );
}
