"use client";

import { useMemo, useState } from "react";
import type { FatigueCounts } from "@/lib/insights/fatigue";
import styles from "./insights.module.css";

// The fatigue tables (lib/insights/fatigue.ts): per reviewer or per tool, approvals, how many
// came within 3 s of the card appearing, and the approval rate. Every column sorts (a button in
// its header, with aria-sort), so a lead can put the quickest approvers or the most-approved
// tools first. A row that is mostly quick approvals says so in words, not only in a number.

export type FatigueRow = { key: string; label: string } & FatigueCounts;

type Column = "label" | "approved" | "quickApprovals" | "quickShare" | "rejected" | "approvalRate";

/** Rows whose approvals are mostly this quick, over at least MIN_APPROVALS, are flagged. */
export const FLAG_SHARE = 0.5;
const MIN_APPROVALS = 5;

const percent = (share: number | null) => (share === null ? "—" : `${Math.round(share * 100)} %`);

export function flagged(row: FatigueCounts): boolean {
  return row.approved >= MIN_APPROVALS && (row.quickShare ?? 0) >= FLAG_SHARE;
}

export function FatigueTable({
  caption,
  first,
  rows,
  quickSeconds,
  testId,
}: {
  caption: string;
  first: string;
  rows: FatigueRow[];
  quickSeconds: number;
  testId: string;
}) {
  const [sort, setSort] = useState<{ column: Column; descending: boolean }>({
    column: "quickShare",
    descending: true,
  });
  const sorted = useMemo(() => {
    const value = (row: FatigueRow) => row[sort.column];
    return [...rows].sort((a, b) => {
      const x = value(a);
      const y = value(b);
      // "—" (no approvals, no votes) sorts last either way
      if (x === null || y === null) return x === y ? 0 : x === null ? 1 : -1;
      const order =
        typeof x === "string" ? x.localeCompare(y as string) : (x as number) - (y as number);
      return (sort.descending ? -order : order) || a.label.localeCompare(b.label);
    });
  }, [rows, sort]);

  const columns: { column: Column; label: string }[] = [
    { column: "label", label: first },
    { column: "approved", label: "Approvals" },
    { column: "quickApprovals", label: `Under ${quickSeconds} s` },
    { column: "quickShare", label: `% under ${quickSeconds} s` },
    { column: "rejected", label: "Rejections" },
    { column: "approvalRate", label: "% approved" },
  ];
  const sortBy = (column: Column) =>
    setSort((current) =>
      current.column === column
        ? { column, descending: !current.descending }
        : // names read A to Z; numbers read largest first
          { column, descending: column !== "label" },
    );

  return (
    <div className={styles.tableWrap} tabIndex={0} role="region" aria-label={caption}>
      <table className={styles.table} data-testid={testId}>
        <caption className="visually-hidden">{caption}, sortable by each column</caption>
        <thead>
          <tr>
            {columns.map(({ column, label }) => (
              <th
                key={column}
                scope="col"
                aria-sort={
                  sort.column === column ? (sort.descending ? "descending" : "ascending") : "none"
                }
              >
                <button
                  type="button"
                  className={styles.sortButton}
                  onClick={() => sortBy(column)}
                  data-testid={`sort-${column}`}
                >
                  {label}
                  <span aria-hidden="true" className={styles.sortMark}>
                    {sort.column === column ? (sort.descending ? "▼" : "▲") : "↕"}
                  </span>
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {sorted.map((row) => (
            <tr key={row.key} data-flagged={flagged(row) || undefined}>
              <th scope="row">
                {row.label}
                {flagged(row) && (
                  <span className={styles.flag} data-testid="fatigue-flag">
                    mostly under {quickSeconds} s
                  </span>
                )}
              </th>
              <td>{row.approved}</td>
              <td>{row.quickApprovals}</td>
              <td>{percent(row.quickShare)}</td>
              <td>{row.rejected}</td>
              <td>{percent(row.approvalRate)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
