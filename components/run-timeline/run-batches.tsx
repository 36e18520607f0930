import Link from "next/link";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { BatchStateBadge, Badge } from "./badges";
import { callDecisionText } from "./describe-event";
import { plural } from "./format";
import { Time } from "@/components/time/time";
import styles from "./run-timeline.module.css";
import { breakable } from "@/components/review-card/breakable";

/** A plan's summary as a reviewer edited it (the agent runs with this one), if they did. */
function editedPlanSummary(batch: BatchView): string | null {
  if (batch.kind !== "plan") return null;
  const edited = batch.calls.find((call) => call.toolName === "plan")?.decision?.editedArgs;
  if (typeof edited !== "object" || edited === null) return null;
  const summary = (edited as { summary?: unknown }).summary;
  return typeof summary === "string" && summary !== batch.plan?.summary ? summary : null;
}

/** The run's pauses, compact: what was asked, and who decided each call. */
export function RunBatches({ batches, now }: { batches: BatchView[]; now: number }) {
  return (
    <section className={styles.section} aria-labelledby="batches-heading">
      <div className={styles.sectionHeader}>
        <h2 id="batches-heading" className={styles.sectionTitle}>
          Approvals
        </h2>
        <span className={styles.count}>{plural(batches.length, "batch", "batches")}</span>
      </div>
      {batches.length === 0 ? (
        <p className={styles.empty}>This run has not asked your queues for approval.</p>
      ) : (
        <ul className={styles.batches}>
          {batches.map((batch) => {
            const editedSummary = editedPlanSummary(batch);
            return (
              <li key={batch.id} className={styles.batch} data-testid="run-batch">
                <div className={styles.batchHeader}>
                  <Badge tone="neutral">{batch.kind === "plan" ? "Plan" : "Action"}</Badge>
                  <BatchStateBadge batch={batch} />
                  <span className={styles.batchMeta}>
                    {batch.queue.name} · <Time iso={batch.createdAt} now={now} variant="relative" />
                  </span>
                  <Link href={`/batches/${batch.id}`} className={styles.batchLink}>
                    Review card
                    <span className="visually-hidden">
                      {` of the ${batch.kind} batch in ${batch.queue.name}`}
                    </span>
                  </Link>
                </div>
                {batch.plan && <p className={styles.planSummary}>{batch.plan.summary}</p>}
                {editedSummary && (
                  <p className={styles.planSummary} data-testid="edited-plan-summary">
                    <span className={styles.subtle}>Summary as approved: </span>
                    {editedSummary}
                  </p>
                )}
                {batch.status === "cancelled" && batch.cancelReason && (
                  <p className={styles.reason}>{batch.cancelReason}</p>
                )}
                <ul className={styles.calls}>
                  {batch.calls.map((call) => {
                    const decision = callDecisionText(call);
                    return (
                      <li key={call.id} className={styles.call}>
                        <div className={styles.callMain}>
                          <code className={styles.tool}>{breakable(call.toolName)}</code>
                          {call.summary && (
                            <span className={styles.callSummary}>{call.summary}</span>
                          )}
                        </div>
                        <div className={`${styles.callDecision} ${styles[decision.tone]}`}>
                          <span data-testid="call-decision">{decision.text}</span>
                          {call.decision && (
                            <Time iso={call.decision.at} now={now} variant="relative" />
                          )}
                        </div>
                        {call.decision?.reason && (
                          <p className={styles.reason}>{call.decision.reason}</p>
                        )}
                      </li>
                    );
                  })}
                </ul>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
