import type { ActionFailure } from "@/app/action-result";
import { formLevelMessages } from "@/components/forms/use-field-errors";
import styles from "./queue-settings.module.css";

/**
 * An action's failure, announced, for what belongs to no field: a conflict, a refusal, or an
 * invalid field no control of this form shows. Fields in `placed` carry their own message
 * (components/forms/field-error.tsx) and are left out here.
 */
export function FormError({
  failure,
  placed = [],
}: {
  failure: ActionFailure | null;
  placed?: readonly string[];
}) {
  const messages = formLevelMessages(failure, placed);
  if (messages.length === 0) return null;
  return (
    <div role="alert" className={styles.error} data-testid="form-error">
      {messages.length === 1 ? (
        messages[0]
      ) : (
        <ul>
          {messages.map((message) => (
            <li key={message}>{message}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
