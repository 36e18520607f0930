"use client";

import { useEffect, useState } from "react";
import { backtestPolicyAction } from "@/app/(reviewer)/policies/actions";
import type { ActionFailure } from "@/app/action-result";
import type { BacktestReport } from "@/lib/policies/backtest-policy";
import styles from "./policies.module.css";

// What a rule would have done to the queue's last 30 days (POST /policy-rules/backtest): shown
// by the new-rule form before saving, and beside each rule of the list.

/** 3,725,000 ms → "1 h 2 min" */
export function formatDuration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return `${Math.round(ms / 1000)} s`;
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  return minutes % 60 ? `${hours} h ${minutes % 60} min` : `${hours} h`;
}

/** The report in full: the sentence, the counts, who would have been overruled. */
export function BacktestDetails({ report }: { report: BacktestReport }) {
  const { calls } = report;
  const shown = report.overturned.decisions.slice(0, 20);
  return (
    <div className={styles.backtest} data-testid="backtest-report">
      <p className={styles.backtestSummary} data-testid="backtest-summary">
        Over the last {daysOf(report)} days, this rule {report.summary}.
      </p>
      <dl className={styles.backtestCounts}>
        <div>
          <dt>Calls matched</dt>
          <dd>{calls.matched}</dd>
        </div>
        <div>
          <dt>Approved as asked</dt>
          <dd>{calls.approved}</dd>
        </div>
        <div>
          <dt>Edited</dt>
          <dd>{calls.edited}</dd>
        </div>
        <div>
          <dt>Rejected</dt>
          <dd>{calls.rejected}</dd>
        </div>
        <div>
          <dt>Expired</dt>
          <dd>{calls.expired}</dd>
        </div>
        <div>
          <dt>Reviewer time saved</dt>
          <dd>{formatDuration(report.cards.savedMs)}</dd>
        </div>
      </dl>
      {(report.notEvidence.policy > 0 || report.notEvidence.memory > 0 || report.shadowed > 0) && (
        <p className={styles.backtestNote}>
          Not counted: {report.notEvidence.policy} calls a policy settled,{" "}
          {report.notEvidence.memory} a remembered approval settled (nobody judged them)
          {report.shadowed > 0 && `, ${report.shadowed} a stronger rule would take`}.
        </p>
      )}
      {report.byTool.length > 1 && (
        <p className={styles.backtestNote}>
          By tool:{" "}
          {report.byTool
            .slice(0, 5)
            .map((t) => `${t.toolName} ${t.matched}`)
            .join(", ")}
          {report.byAgent.length > 1 &&
            ` · by agent: ${report.byAgent
              .slice(0, 5)
              .map((a) => `${a.agent.name} ${a.matched}`)
              .join(", ")}`}
        </p>
      )}
      {report.overturned.count > 0 && (
        <div className={styles.overturned} data-testid="backtest-overturned">
          <p className={styles.overturnedTitle}>
            It would have overturned {report.overturned.count}{" "}
            {report.overturned.count === 1 ? "decision" : "decisions"}
            {shown.length < report.overturned.count && ` (the first ${shown.length} shown)`}:
          </p>
          <ul>
            {shown.map((d) => (
              <li key={d.callId}>
                <a href={`/batches/${d.batchId}`}>{d.toolName}</a> from {d.agent.name}:{" "}
                {d.outcome === "rejected"
                  ? "rejected"
                  : d.edited
                    ? "approved with edits"
                    : "approved"}{" "}
                by {d.deciders.map((p) => p.name).join(" and ") || "a reviewer"}
                {d.reason && <> — “{d.reason}”</>}
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}

function daysOf(report: BacktestReport): number {
  return Math.round((Date.parse(report.period.to) - Date.parse(report.period.from)) / 86_400_000);
}

type Outcome =
  { kind: "failed"; failure: ActionFailure } | { kind: "done"; report: BacktestReport };

/** One line beside a rule of the list: its backtest over the last 30 days, details on demand. */
export function RuleBacktest({ input, label }: { input: object; label: string }) {
  const key = JSON.stringify(input);
  // the answer for the rule as it was asked; a rule changed since is loading again
  const [answer, setAnswer] = useState<{ key: string; outcome: Outcome } | null>(null);
  useEffect(() => {
    let live = true;
    backtestPolicyAction(JSON.parse(key))
      .then((result) => {
        if (!live) return;
        setAnswer({
          key,
          outcome: result.ok
            ? { kind: "done", report: result.report }
            : { kind: "failed", failure: result },
        });
      })
      .catch(() => {
        if (live)
          setAnswer({
            key,
            outcome: {
              kind: "failed",
              failure: {
                ok: false,
                code: "unavailable",
                message: "The backtest could not be run.",
              },
            },
          });
      });
    return () => {
      live = false;
    };
  }, [key]);
  const state = answer?.key === key ? answer.outcome : ({ kind: "loading" } as const);

  if (state.kind === "loading")
    return (
      <p className={styles.ruleLine} role="status" data-testid="rule-backtest-loading">
        <span className={styles.lineLabel}>Last 30 days</span> backtesting…
      </p>
    );
  if (state.kind === "failed")
    return (
      <p className={styles.ruleLine} data-testid="rule-backtest-error">
        <span className={styles.lineLabel}>Last 30 days</span> no backtest: {state.failure.message}
      </p>
    );
  return (
    <details className={styles.ruleBacktest} data-testid="rule-backtest">
      <summary aria-label={`Backtest of ${label}: ${state.report.summary}`}>
        <span className={styles.lineLabel}>Last 30 days</span> {state.report.summary}
      </summary>
      <BacktestDetails report={state.report} />
    </details>
  );
}
