import type { ReactNode } from "react";
import type { RunView } from "@/lib/api/views";
import { formatBytes } from "./format";
import { Time } from "@/components/time/time";
import styles from "./run-timeline.module.css";

/** The run's properties, as a definition list for the side panel. */
export function RunDetails({
  run,
  checkpointBytes,
  now,
}: {
  run: RunView;
  checkpointBytes: number | null;
  now: number;
}) {
  const rows: [string, ReactNode, string?][] = [
    ["Agent", run.agent.name],
    ["Run ID", <code key="id">{run.id}</code>, "run-id"],
    ["External ID", run.externalId ? <code key="ext">{run.externalId}</code> : <None />],
    ["Conversation", run.conversationId ? <code key="conv">{run.conversationId}</code> : <None />],
    ["Created", <Time key="created" iso={run.createdAt} now={now} variant="stacked" />],
    ["Updated", <Time key="updated" iso={run.updatedAt} now={now} variant="stacked" />],
    [
      "Claimed by",
      run.claim ? (
        <span key="claim">
          <code>{run.claim.workerId}</code>
          <span className={styles.subtle}>
            {" "}
            lease until <Time iso={run.claim.leaseExpiresAt} now={now} variant="relative" />
          </span>
        </span>
      ) : (
        <None text="Not claimed" />
      ),
      "run-claim",
    ],
    [
      "Checkpoint",
      checkpointBytes === null ? (
        <None text="None stored" />
      ) : (
        <span key="checkpoint" title={`${checkpointBytes.toLocaleString("en-US")} bytes`}>
          {formatBytes(checkpointBytes)}
        </span>
      ),
      "run-checkpoint",
    ],
  ];
  return (
    <dl className={styles.details}>
      {rows.map(([term, value, testId]) => (
        <div key={term} className={styles.detailRow}>
          <dt>{term}</dt>
          <dd data-testid={testId}>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function None({ text = "—" }: { text?: string }) {
  return <span className={styles.subtle}>{text}</span>;
}
