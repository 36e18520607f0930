import type { Connection } from "./use-live-queue";
import styles from "./queue.module.css";

const LABEL: Record<Connection, string> = {
  connecting: "Connecting…",
  live: "Live",
  reconnecting: "Reconnecting…",
  offline: "Offline",
  "signed-out": "Signed out",
};

export function ConnectionBadge({ connection }: { connection: Connection }) {
  return (
    <span
      className={styles.connection}
      data-state={connection}
      data-testid="connection"
      title={connection === "live" ? "New cards and decisions arrive as they happen" : undefined}
    >
      <span className={styles.dot} aria-hidden="true" />
      {LABEL[connection]}
    </span>
  );
}
