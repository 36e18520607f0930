import type { ReactNode } from "react";
import styles from "./review-card.module.css";

/** The footer of an edit form (args or a plan's summary): approve the edit, its scope, cancel. */
export function EditActions(props: {
  /** the approve button's text, and its accessible name (which names what is approved) */
  label: string;
  ariaLabel: string;
  canSubmit: boolean;
  busy: boolean;
  scopeControl?: ReactNode;
  onCancel: () => void;
}) {
  return (
    <div className={styles.actions}>
      <button
        type="submit"
        className={`${styles.button} ${styles.buttonApprove}`}
        data-testid="confirm-edit"
        disabled={!props.canSubmit}
        aria-label={props.busy ? undefined : props.ariaLabel}
      >
        {props.busy ? "Approving edit…" : props.label}
      </button>
      {props.scopeControl}
      <button
        type="button"
        className={styles.button}
        onClick={props.onCancel}
        disabled={props.busy}
      >
        Cancel
      </button>
    </div>
  );
}
