"use client";

import { useMemo } from "react";
import { diffLines, foldUnchanged, prettyJson, type DiffLine } from "./line-diff";
import styles from "./review-card.module.css";

// A pasted megabyte can change thousands of lines; the reviewer needs the first few hundred.
const MAX_LINES = 400;

const SIGN = { same: " ", added: "+", removed: "−" } as const;
const SPOKEN = { same: "", added: "Added: ", removed: "Removed: " } as const;
const LINE_CLASS = { same: "diffSame", added: "diffAdded", removed: "diffRemoved" } as const;

type Row = DiffLine | { kind: "gap"; text: string };

function diffRows(before: unknown, after: unknown): Row[] | null {
  const lines = diffLines(prettyJson(before), prettyJson(after));
  if (!lines.some((line) => line.kind !== "same")) return null;
  const rows: Row[] = [];
  let shown = 0;
  let hidden = 0;
  for (const hunk of foldUnchanged(lines)) {
    if (hunk.kind === "gap") {
      rows.push({
        kind: "gap",
        text: `⋯ ${hunk.count} unchanged line${hunk.count === 1 ? "" : "s"}`,
      });
      continue;
    }
    for (const line of hunk.lines) {
      if (shown < MAX_LINES) {
        rows.push(line);
        shown++;
      } else {
        hidden++;
      }
    }
  }
  if (hidden > 0) rows.push({ kind: "gap", text: `… ${hidden} more lines not shown` });
  return rows;
}

/** The args before and after an edit, as a folded line diff of their pretty-printed JSON. */
export function DiffView({
  before,
  after,
  label,
}: {
  before: unknown;
  after: unknown;
  label: string;
}) {
  const rows = useMemo(() => diffRows(before, after), [before, after]);
  if (!rows) return <p className={styles.muted}>No changes from the agent&apos;s args.</p>;
  return (
    <div className={styles.diff} role="group" aria-label={label} data-testid="args-diff">
      {rows.map((row, index) =>
        row.kind === "gap" ? (
          <div key={index} className={styles.diffGap}>
            {row.text}
          </div>
        ) : (
          <div key={index} className={styles[LINE_CLASS[row.kind]]} data-diff={row.kind}>
            <span aria-hidden="true" className={styles.diffSign}>
              {SIGN[row.kind]}
            </span>
            <span className={styles.visuallyHidden}>{SPOKEN[row.kind]}</span>
            {row.text}
          </div>
        ),
      )}
    </div>
  );
}
