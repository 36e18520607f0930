import type { ReactNode } from "react";
import { breakable } from "./breakable";
import { Risks } from "./call-row";
import { Ago } from "./countdown";
import { shownCost } from "./cost";
import { formatCosts, shortId } from "./format";
import { useTimeFormat } from "./time-context";
import styles from "./review-card.module.css";
import { revealInvisible } from "./reveal";
import { BatchStatusBadge } from "./status-badge";
import type { Batch, Plan } from "./types";

const KIND = {
  plan: { text: "Plan", title: "A pre-flight plan: approve it before the agent starts the work" },
  action: {
    text: "Action",
    title: "In-flight tool calls: the agent is paused until they are decided",
  },
} as const;

export type HeadingLevel = 2 | 3 | 4 | 5;

function title(batch: Batch): string {
  if (batch.plan) return batch.plan.summary;
  const [first] = batch.calls;
  if (batch.calls.length === 1 && first) return first.summary || first.toolName;
  const names = [...new Set(batch.calls.map((c) => c.toolName))];
  const listed = names.slice(0, 3).join(", ") + (names.length > 3 ? ", …" : "");
  return `${batch.calls.length} tool calls: ${listed}`;
}

export function CardHeader(props: {
  batch: Batch;
  headingId: string;
  headingLevel: HeadingLevel;
  runHref?: (runId: string) => string;
  now: () => number;
  /** shown under the meta line: who is reviewing the card */
  children?: ReactNode;
}) {
  const { batch } = props;
  const Heading = `h${props.headingLevel}` as const;
  const { locale } = useTimeFormat();
  // As the calls will run: an approved edit's cost, not the agent's pre-edit estimate.
  const costs = batch.calls.flatMap((c) => {
    const cost = shownCost(c);
    return cost ? [cost] : [];
  });
  const href = props.runHref?.(batch.runId);
  const kind = KIND[batch.kind];
  return (
    <header className={styles.header}>
      <div className={styles.titleRow}>
        <span className={styles.kind} data-kind={batch.kind} title={kind.title}>
          {kind.text}
        </span>
        <Heading id={props.headingId} className={styles.title}>
          {breakable(revealInvisible(title(batch)))}
        </Heading>
        <BatchStatusBadge batch={batch} />
      </div>
      <p className={styles.meta}>
        <span className={styles.agent}>{revealInvisible(batch.agent.name)}</span>
        <span className={styles.metaSep} aria-hidden="true">
          ·
        </span>
        <span>
          queue <span className={styles.metaValue}>{batch.queue.name}</span>
          {batch.routing ? (
            <span data-testid="routed-by" title="The routing rule that chose this queue">
              {" "}
              (routed by “{batch.routing.name}”)
            </span>
          ) : null}
          {batch.escalations ? (
            <span data-testid="escalated">
              {" "}
              (escalated{batch.escalations > 1 ? ` ${batch.escalations}×` : ""})
            </span>
          ) : null}
        </span>
        <span className={styles.metaSep} aria-hidden="true">
          ·
        </span>
        <span>
          run{" "}
          {href ? (
            <a href={href} className={styles.link} title={batch.runId}>
              {shortId(batch.runId)}
            </a>
          ) : (
            <span className={styles.metaValue} title={batch.runId}>
              {shortId(batch.runId)}
            </span>
          )}
        </span>
        <span className={styles.metaSep} aria-hidden="true">
          ·
        </span>
        <span>
          asked <Ago at={batch.createdAt} now={props.now} />
        </span>
        {costs.length > 1 && (
          <>
            <span className={styles.metaSep} aria-hidden="true">
              ·
            </span>
            <span>est. {formatCosts(costs, locale)} in all</span>
          </>
        )}
      </p>
      {props.children}
    </header>
  );
}

export function PlanSection(props: { plan: Plan; compact: boolean; headingLevel: HeadingLevel }) {
  const { plan, compact } = props;
  const Label = `h${props.headingLevel + 1}` as "h3" | "h4" | "h5" | "h6";
  const resources = plan.resources ?? [];
  const risks = plan.risks ?? [];
  return (
    <div className={styles.plan}>
      {plan.rationale && (
        <div className={styles.planPart}>
          <Label className={styles.planLabel}>Why</Label>
          <p className={styles.prose}>{revealInvisible(plan.rationale)}</p>
        </div>
      )}
      {resources.length > 0 && (
        <div className={styles.planPart}>
          <Label className={styles.planLabel}>Touches</Label>
          <ul className={styles.resources}>
            {resources.slice(0, compact ? 5 : 200).map((resource, index) => (
              <li key={index}>
                <code>{revealInvisible(resource)}</code>
              </li>
            ))}
            {compact && resources.length > 5 && (
              <li className={styles.muted}>and {resources.length - 5} more</li>
            )}
          </ul>
        </div>
      )}
      {risks.length > 0 && (
        <div className={styles.planPart}>
          <Label className={styles.planLabel}>Risks</Label>
          <Risks risks={risks} label="the plan" />
        </div>
      )}
      {plan.rollback && (
        <div className={styles.planPart}>
          <Label className={styles.planLabel}>Rollback</Label>
          <p className={styles.prose}>{revealInvisible(plan.rollback)}</p>
        </div>
      )}
    </div>
  );
}
