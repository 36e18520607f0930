"use client";

import styles from "./queue.module.css";
import type { Notifications } from "./use-notifications";

/** "Notify me": opt in to browser notifications for cards that arrive while the tab is hidden. */
export function NotifyToggle({ enabled, permission, setEnabled }: Notifications) {
  if (permission === "unsupported") return null;
  return (
    <span className={styles.notify}>
      <label>
        <input
          type="checkbox"
          checked={enabled}
          onChange={(e) => void setEnabled(e.target.checked)}
          data-testid="notify-toggle"
        />{" "}
        Notify me
      </label>
      {permission === "denied" && (
        <span className={styles.notifyBlocked} role="status">
          blocked by the browser
        </span>
      )}
    </span>
  );
}
