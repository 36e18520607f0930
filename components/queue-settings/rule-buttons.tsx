import styles from "./queue-settings.module.css";

/**
 * The buttons of one rule in an ordered list (routing and policy rules): move up and down, turn
 * off and on, edit in place, remove. Labels name the rule, so a screen reader hears which.
 */
export function RuleButtons(props: {
  name: string;
  enabled: boolean;
  /** its place in the list, and the list's length */
  index: number;
  count: number;
  /** what moving up or down means for this list, e.g. "tried earlier" */
  earlier: string;
  later: string;
  disabled: boolean;
  className?: string;
  onMove: (to: number) => void;
  onToggle: () => void;
  onEdit: () => void;
  onRemove: () => void;
}) {
  const { name, index, disabled } = props;
  return (
    <div className={props.className ?? styles.rowButtons}>
      <button
        type="button"
        className={styles.secondary}
        disabled={disabled || index === 0}
        onClick={() => props.onMove(index - 1)}
        aria-label={`Move rule ${name} up`}
        title={`Move up: ${props.earlier}`}
      >
        ↑
      </button>
      <button
        type="button"
        className={styles.secondary}
        disabled={disabled || index === props.count - 1}
        onClick={() => props.onMove(index + 1)}
        aria-label={`Move rule ${name} down`}
        title={`Move down: ${props.later}`}
      >
        ↓
      </button>
      <button
        type="button"
        className={styles.secondary}
        disabled={disabled}
        onClick={props.onToggle}
        aria-label={`${props.enabled ? "Turn off" : "Turn on"} rule ${name}`}
      >
        {props.enabled ? "Turn off" : "Turn on"}
      </button>
      <button
        type="button"
        className={styles.secondary}
        disabled={disabled}
        onClick={props.onEdit}
        aria-label={`Edit rule ${name}`}
      >
        Edit
      </button>
      <button
        type="button"
        className={styles.danger}
        disabled={disabled}
        onClick={props.onRemove}
        aria-label={`Remove rule ${name}`}
      >
        Remove
      </button>
    </div>
  );
}
