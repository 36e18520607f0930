import Link from "next/link";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import type { HistoryFilterOptions } from "@/lib/history/filter-options";
import { FilterDisclosure } from "@/components/forms/filter-disclosure";
import { HistoryFilters } from "./history-filters";
import { exportHref, queryString, type FilterValues } from "./history-query";
import { HistoryTable } from "./history-table";
import styles from "./history.module.css";

export type HistoryProblem = { message: string; issues: { path: string; message: string }[] };

/** The history page: decided batches of the reviewer's queues, filtered by the URL. */
export function HistoryPage({
  filters,
  options,
  cursor,
  page,
  problem,
  now,
  timeZone,
}: {
  filters: FilterValues;
  options: HistoryFilterOptions;
  cursor: string | null;
  page: { batches: BatchView[]; nextCursor: string | null };
  problem?: HistoryProblem;
  now: number;
  /** the zone the page's times and its From/To days are in */
  timeZone: string;
}) {
  const filtered = Object.keys(filters).length > 0;
  return (
    <>
      <header className={styles.header}>
        <div>
          <h1 className={styles.title}>History</h1>
          <p className={styles.lead}>
            Every settled request in your queues, newest decision first: who decided, and why.
          </p>
        </div>
        <div className={styles.exports}>
          <a href={exportHref(filters, "csv", timeZone)} className={styles.exportLink} download>
            Export CSV
          </a>
          <a href={exportHref(filters, "json", timeZone)} className={styles.exportLink} download>
            Export JSON
          </a>
        </div>
      </header>

      <FilterDisclosure
        id="history-filters"
        active={Object.keys(filters).length}
        toggleRowClassName={styles.filterToggleRow}
      >
        <HistoryFilters filters={filters} options={options} timeZone={timeZone} />
      </FilterDisclosure>

      {problem && (
        <div className={styles.error} role="alert">
          {problem.message}
          {problem.issues.length > 1 && (
            <ul>
              {problem.issues.map((issue) => (
                <li key={`${issue.path}:${issue.message}`}>
                  {issue.path}: {issue.message}
                </li>
              ))}
            </ul>
          )}
        </div>
      )}

      {page.batches.length === 0 ? (
        <div className={styles.empty} data-testid="history-empty">
          <p className={styles.emptyTitle}>
            {filtered || cursor ? "No decisions yet match these filters" : "No decisions yet"}
          </p>
          <p className={styles.emptyText}>
            {filtered ? (
              <>
                Try a wider date range or another outcome, or{" "}
                <Link href="/history">clear the filters</Link>.
              </>
            ) : (
              "Requests appear here once they are approved, rejected, expired or withdrawn."
            )}
          </p>
        </div>
      ) : (
        <HistoryTable batches={page.batches} now={now} timeZone={timeZone} />
      )}

      {(cursor || page.nextCursor) && (
        <nav className={styles.paging} aria-label="History pages">
          {cursor ? (
            <Link href={`/history${queryString(filters)}`}>Newest decisions</Link>
          ) : (
            <span />
          )}
          {page.nextCursor && (
            <Link href={`/history${queryString({ ...filters, cursor: page.nextCursor })}`}>
              Load older decisions
            </Link>
          )}
        </nav>
      )}
    </>
  );
}
