import type { QueueDetailView } from "@/lib/queues/queue-views";
import { formatDuration } from "./format";
import styles from "./queue-settings.module.css";

/** A reviewer's read-only view of the settings. */
export function SettingsSummary({ queue }: { queue: QueueDetailView }) {
  return (
    <dl className={styles.summary} data-testid="settings-summary">
      <div>
        <dt>Approvals needed</dt>
        <dd>{queue.requiredApprovals}</dd>
      </div>
      <div>
        <dt>Separation of duties</dt>
        <dd>{queue.separationOfDuties ? "On" : "Off"}</dd>
      </div>
      <div>
        <dt>Review claims</dt>
        <dd>{queue.claimMode === "lock" ? "Lock" : "Mark"}</dd>
      </div>
      <div>
        <dt>Default timeout</dt>
        <dd>{formatDuration(queue.defaultTimeoutSecs)}</dd>
      </div>
      <div>
        <dt>Approve on timeout</dt>
        <dd>
          {queue.approveOnTimeout
            ? `Allowed, ≥ ${formatDuration(queue.approveOnTimeoutMinSecs)}`
            : "Not allowed"}
        </dd>
      </div>
      <div>
        <dt>Escalates to</dt>
        <dd>{queue.escalationQueue?.name ?? "No escalation"}</dd>
      </div>
      <div>
        <dt>Slack channel</dt>
        <dd>{queue.slackChannelId ?? "Not posted to Slack"}</dd>
      </div>
    </dl>
  );
}
