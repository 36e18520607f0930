import type { ActionFailure } from "@/app/action-result";
import styles from "./queue-settings.module.css";

/** An action's failure, announced: the message and, for invalid input, each field's problem. */
export function FormError({ failure }: { failure: ActionFailure | null }) {
  if (!failure) return null;
  const issues = failure.issues ?? [];
  return (
    <div role="alert" className={styles.error} data-testid="form-error">
      {issues.length > 0 ? "Check these fields:" : failure.message}
      {issues.length > 0 && (
        <ul>
          {issues.map((issue) => (
            <li key={`${issue.path}:${issue.message}`}>
              <strong>{issue.path}</strong>: {issue.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
