import Link from "next/link";
import type { RunTimeline } from "@/lib/runs/run-timeline";
import { RunStatusBadge } from "./badges";
import { shortId } from "./format";
import { RollbackControl } from "./rollback-control";
import { RunBatches } from "./run-batches";
import { RunDetails } from "./run-details";
import { Time } from "@/components/time/time";
import { Timeline } from "./timeline";
import styles from "./run-timeline.module.css";

/** The run page: who ran what, what was asked, who decided, and everything that happened. */
export function RunPage({
  timeline,
  cursor,
  now,
  timeZone,
}: {
  timeline: RunTimeline;
  cursor: string | null;
  now: number;
  /** the viewer's zone (the <Time>s read it from context; the timeline's notes need it here) */
  timeZone: string;
}) {
  const { run } = timeline;
  const batches = run.batches ?? [];
  return (
    <>
      <header className={styles.header}>
        <p className={styles.crumbs}>
          <Link href="/history">History</Link> / Run
        </p>
        <div className={styles.titleRow}>
          <h1 className={styles.title}>
            {run.externalId ?? "Run"}{" "}
            <span className={styles.titleId} title={run.id}>
              {shortId(run.id)}
            </span>
          </h1>
          <RunStatusBadge run={run} />
        </div>
        <p className={styles.lead}>
          {run.agent.name} · started <Time iso={run.createdAt} now={now} variant="relative" />
        </p>
      </header>
      <div className={styles.layout}>
        <div className={styles.main}>
          <RunBatches batches={batches} now={now} />
          <Timeline
            runId={run.id}
            events={timeline.events}
            batches={batches}
            now={now}
            timeZone={timeZone}
            cursor={cursor}
            nextCursor={timeline.nextCursor}
          />
        </div>
        <aside className={styles.side} aria-label="Run details">
          <RunDetails
            run={run}
            checkpointBytes={timeline.checkpointBytes}
            lastClaim={timeline.lastClaim}
            now={now}
          />
          <RollbackControl
            runId={run.id}
            requestedAt={run.rollbackRequestedAt}
            unavailable={timeline.rollback.available ? null : timeline.rollback.reason}
          />
        </aside>
      </div>
    </>
  );
}
