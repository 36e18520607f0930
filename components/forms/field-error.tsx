import { errorIdFor } from "./use-field-errors";
import styles from "./field-error.module.css";

/** A field's problem, under it; its id is what the control's `aria-describedby` names. */
export function FieldError({ controlId, message }: { controlId: string; message?: string }) {
  if (!message) return null;
  return (
    <p id={errorIdFor(controlId)} className={styles.fieldError} data-testid="field-error">
      {message}
    </p>
  );
}
