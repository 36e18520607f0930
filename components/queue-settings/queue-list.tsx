import Link from "next/link";
import { Badge } from "@/components/run-timeline/badges";
import type { QueueView } from "@/lib/queues/queue-views";
import { formatDuration, ROLE_LABEL } from "./format";
import styles from "./queue-settings.module.css";
import { ScrollBox } from "@/components/app-shell/scroll-box";

/** The caller's queues, one row each; the name leads to the queue's settings. */
export function QueueList({ queues }: { queues: QueueView[] }) {
  if (queues.length === 0) {
    return (
      <div className={styles.empty}>
        <p className={styles.emptyTitle}>You are not in any queue yet</p>
        <p className={styles.emptyText}>
          Ask a lead or an admin to add you to their team&apos;s queue.
        </p>
      </div>
    );
  }
  return (
    <ScrollBox label="Your queues" className={styles.tableWrap}>
      <table className={styles.table}>
        <caption className="visually-hidden">Your queues</caption>
        <thead>
          <tr>
            <th scope="col">Queue</th>
            <th scope="col">Your role</th>
            <th scope="col">Approvals needed</th>
            <th scope="col">Separation of duties</th>
            <th scope="col">Default timeout</th>
            <th scope="col">Escalates to</th>
            <th scope="col">Members</th>
          </tr>
        </thead>
        <tbody>
          {queues.map((queue) => (
            <tr key={queue.id} data-testid="queue-row" data-queue-id={queue.id}>
              <td>
                <Link href={`/queues/${queue.id}`} className={styles.queueLink}>
                  {queue.name}
                </Link>
                {queue.archivedAt && (
                  <>
                    {" "}
                    <Badge tone="neutral">Archived</Badge>
                  </>
                )}
              </td>
              <td>
                {queue.access.role ? (
                  ROLE_LABEL[queue.access.role]
                ) : (
                  <span className={styles.muted}>Admin (not a member)</span>
                )}
              </td>
              <td>{queue.requiredApprovals}</td>
              <td>{queue.separationOfDuties ? "On" : "Off"}</td>
              <td>{formatDuration(queue.defaultTimeoutSecs)}</td>
              <td>{queue.escalationQueue?.name ?? <span className={styles.muted}>—</span>}</td>
              <td>{queue.memberCount}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollBox>
  );
}
