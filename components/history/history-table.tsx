import Link from "next/link";
import { Fragment } from "react";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { BatchStateBadge } from "@/components/run-timeline/badges";
import { shortId } from "@/components/run-timeline/format";
import { Time } from "@/components/time/time";
import { CallOutcomes, EditDetails, editsOf, PlanSummary } from "./history-audit";
import styles from "./history.module.css";
import { ScrollBox } from "@/components/app-shell/scroll-box";
import { breakable } from "@/components/review-card/breakable";

const unique = (values: (string | null | undefined)[]) => [
  ...new Set(values.filter((v): v is string => Boolean(v))),
];

/** Who settled a batch: reviewers by name, or what settled it when no one did. */
export function decidersOf(batch: BatchView): string[] {
  if (batch.status === "cancelled") return [`${batch.agent.name} (agent)`];
  return unique(
    batch.calls.map((call) => {
      const decision = call.decision;
      if (!decision) return null;
      switch (decision.source) {
        case "timeout":
          return "Deadline";
        case "policy":
          return "Policy";
        case "memory":
          return decision.by ? `${decision.by.name} (remembered)` : "Remembered approval";
        default:
          return decision.by?.name ?? "A reviewer";
      }
    }),
  );
}

export function reasonsOf(batch: BatchView): string[] {
  return unique([...batch.calls.map((call) => call.decision?.reason), batch.cancelReason]);
}

const MAX_TOOLS = 3;

/** The decided batches, one row each; every row leads to its run (the tools are the link). */
export function HistoryTable({
  batches,
  now,
  timeZone,
}: {
  batches: BatchView[];
  now: number;
  timeZone: string;
}) {
  return (
    <ScrollBox label="Decided batches" className={styles.tableWrap}>
      <table className={`${styles.table} stack-table`}>
        <caption className="visually-hidden">Decided batches, newest decision first</caption>
        <thead>
          <tr>
            <th scope="col">
              Decided <span className={styles.zone}>({zoneLabel(timeZone)})</span>
            </th>
            <th scope="col">Tools</th>
            <th scope="col">Kind</th>
            <th scope="col">Agent</th>
            <th scope="col">Queue</th>
            <th scope="col">Outcome</th>
            <th scope="col">Decided by</th>
            <th scope="col">Reason</th>
          </tr>
        </thead>
        <tbody>
          {batches.map((batch) => {
            const tools = unique(batch.calls.map((call) => call.toolName));
            const reasons = reasonsOf(batch);
            const edited = editsOf(batch).length > 0;
            return (
              <Fragment key={batch.id}>
                <tr data-testid="history-row" data-batch-id={batch.id}>
                  <td className={styles.when} data-label="Decided">
                    {batch.decidedAt ? (
                      <Time iso={batch.decidedAt} now={now} variant="short" />
                    ) : (
                      "—"
                    )}
                  </td>
                  <td className={styles.tools} data-cell="name">
                    <Link href={`/runs/${batch.runId}`} className={styles.runLink}>
                      {tools.slice(0, MAX_TOOLS).map((tool) => (
                        <code key={tool}>{breakable(tool)}</code>
                      ))}
                      {tools.length > MAX_TOOLS && (
                        <span className={styles.more}>+{tools.length - MAX_TOOLS} more</span>
                      )}
                      <span className="visually-hidden">, view run {shortId(batch.runId)}</span>
                    </Link>
                    <PlanSummary batch={batch} />
                  </td>
                  <td className={styles.muted} data-label="Kind">
                    {batch.kind === "plan" ? "Plan" : "Action"}
                  </td>
                  <td data-label="Agent">{batch.agent.name}</td>
                  <td className={styles.muted} data-label="Queue">
                    {batch.queue.name}
                  </td>
                  <td data-label="Outcome">
                    <BatchStateBadge batch={batch} />
                    <CallOutcomes batch={batch} />
                  </td>
                  <td data-testid="history-deciders" data-label="Decided by">
                    {decidersOf(batch).join(", ") || "—"}
                  </td>
                  <td className={styles.reasons} data-testid="history-reasons" data-label="Reason">
                    {reasons.length === 0 ? (
                      <span className={styles.none}>—</span>
                    ) : (
                      reasons.map((reason) => (
                        <p key={reason} title={reason}>
                          {reason}
                        </p>
                      ))
                    )}
                  </td>
                </tr>
                {edited && (
                  <tr className={styles.detailRow} data-batch-id={batch.id}>
                    <td colSpan={8}>
                      <EditDetails batch={batch} now={now} />
                    </td>
                  </tr>
                )}
              </Fragment>
            );
          })}
        </tbody>
      </table>
    </ScrollBox>
  );
}

/** "Asia/Kolkata" → "Kolkata", "America/Argentina/Buenos_Aires" → "Buenos Aires": for headers. */
function zoneLabel(timeZone: string): string {
  return (timeZone.split("/").pop() ?? timeZone).replaceAll("_", " ");
}
