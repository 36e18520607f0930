import type { ReactNode } from "react";
import type { RunView } from "@/lib/read-models/batch-run-views";
import type { ClaimEnd, LastClaim } from "@/lib/runs/run-timeline";
import { formatBytes } from "./format";
import { Time } from "@/components/time/time";
import styles from "./run-timeline.module.css";

/** The run's properties, as a definition list for the side panel. */
const CLAIM_ENDED: Record<ClaimEnd, string> = {
  completed: "claim ended when the run completed",
  failed: "claim ended when the run failed",
  lease_expired: "claim ended: its lease expired",
  paused: "claim ended when the run paused for review",
};

export function RunDetails({
  run,
  checkpointBytes,
  lastClaim,
  now,
}: {
  run: RunView;
  checkpointBytes: number | null;
  /** who held the run last, when no worker holds it now (the run row forgets the worker) */
  lastClaim: LastClaim | null;
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
      run.claim || !lastClaim ? "Claimed by" : "Last claimed by",
      run.claim ? (
        <span key="claim">
          <code>{run.claim.workerId}</code>
          <span className={styles.subtle}>
            {" "}
            lease until <Time iso={run.claim.leaseExpiresAt} now={now} variant="relative" />
          </span>
        </span>
      ) : lastClaim ? (
        <span key="claim">
          <code>{lastClaim.workerId}</code>
          <span className={styles.subtle}>
            {" "}
            {lastClaim.ended ? (
              <>
                · {CLAIM_ENDED[lastClaim.ended.how]}{" "}
                <Time iso={lastClaim.ended.at} now={now} variant="relative" />
              </>
            ) : (
              "· claim ended"
            )}
          </span>
        </span>
      ) : (
        <None text="Never claimed" />
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
