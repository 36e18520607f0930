"use client";

import { useSecondsLeft } from "@/components/review-card/use-clock";
import styles from "./queue.module.css";
import type { ToastState } from "./use-held-approval";

const clock = () => Date.now();

/**
 * The undo window of a keyed approval. The region is always in the page so screen readers hear
 * each message once (polite); the ticking seconds are hidden from them, the message says "5
 * seconds" once.
 */
export function UndoToast({
  toast,
  delayMs,
  onUndo,
  shortcutsEnabled,
}: {
  toast: ToastState | null;
  delayMs: number;
  onUndo: () => void;
  shortcutsEnabled: boolean;
}) {
  return (
    <div className={styles.toastRegion} role="status" aria-live="polite" aria-atomic="false">
      {toast && (
        <div
          className={styles.toast}
          data-testid="undo-toast"
          data-phase={toast.phase}
          data-tone={toast.phase === "done" ? toast.tone : "pending"}
        >
          {toast.phase === "held" ? (
            <>
              <p className={styles.toastText}>
                Approving <code>{toast.intent.label}</code> in <HeldSeconds dueAt={toast.dueAt} />
                <span className="visually-hidden">{Math.round(delayMs / 1000)} seconds</span>
                {shortcutsEnabled ? " — press z or Undo to cancel." : " — Undo cancels it."}
              </p>
              <button
                type="button"
                className="shell-button"
                data-testid="undo-approval"
                aria-keyshortcuts={shortcutsEnabled ? "z" : undefined}
                onClick={onUndo}
              >
                Undo{shortcutsEnabled ? <kbd aria-hidden="true">z</kbd> : null}
              </button>
              <span
                key={toast.intent.callId}
                className={styles.toastProgress}
                style={{ ["--toast-ms" as string]: `${delayMs}ms` }}
                aria-hidden="true"
              />
            </>
          ) : toast.phase === "sending" ? (
            <p className={styles.toastText}>
              Approving <code>{toast.intent.label}</code>…
            </p>
          ) : (
            <p className={styles.toastText}>{toast.text}</p>
          )}
        </div>
      )}
    </div>
  );
}

function HeldSeconds({ dueAt }: { dueAt: number }) {
  const seconds = useSecondsLeft(dueAt, clock, true);
  return (
    <span className={styles.toastSeconds} aria-hidden="true" data-testid="undo-seconds">
      {seconds} s
    </span>
  );
}
