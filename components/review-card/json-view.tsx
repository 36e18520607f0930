"use client";

import { memo, useMemo, useState } from "react";
import styles from "./review-card.module.css";
import { revealInvisible } from "./reveal";

// Args come from agents and may hold markup or megabytes. Everything renders as React text
// (inert), long strings are cut, containers page their children, and only a bounded number of
// nodes start expanded: the rest open on demand.

const PAGE = 100;
const STRING_PREVIEW = 200;
const STRING_STEP = 5_000;
const MAX_OPEN_DEPTH = 8;
const OPEN_BUDGET = 400;

type Container = Record<string, unknown> | unknown[];

function isContainer(value: unknown): value is Container {
  return typeof value === "object" && value !== null;
}

function childCount(value: Container): number {
  return Array.isArray(value) ? value.length : Object.keys(value).length;
}

function firstChildren(value: Container, limit: number): [string, unknown][] {
  if (Array.isArray(value)) return value.slice(0, limit).map((v, i) => [String(i), v]);
  const out: [string, unknown][] = [];
  for (const key in value) {
    if (out.length >= limit) break;
    if (Object.hasOwn(value, key)) out.push([key, value[key]]);
  }
  return out;
}

/** Containers that start open: breadth first, the root and up to `openDepth` levels below it, within a budget. */
function initiallyOpen(root: unknown, openDepth: number): Set<unknown> {
  const open = new Set<unknown>();
  let level: unknown[] = [root];
  let budget = OPEN_BUDGET;
  for (let depth = 0; depth <= openDepth && level.length > 0; depth++) {
    const next: unknown[] = [];
    for (const node of level) {
      if (!isContainer(node)) continue;
      const shown = Math.min(childCount(node), PAGE);
      if (depth > 0 && shown > budget) continue;
      budget -= shown;
      open.add(node);
      for (const [, child] of firstChildren(node, PAGE)) next.push(child);
    }
    level = next;
  }
  return open;
}

export type JsonViewProps = {
  value: unknown;
  /** levels open below the root at first (capped at 8); 0 shows the top-level keys, values closed */
  openDepth?: number;
};

export const JsonView = memo(function JsonView({
  value,
  openDepth = MAX_OPEN_DEPTH,
}: JsonViewProps) {
  const open = useMemo(
    () => initiallyOpen(value, Math.min(openDepth, MAX_OPEN_DEPTH)),
    [value, openDepth],
  );
  return (
    <div className={styles.json} data-testid="json-view">
      {isContainer(value) && childCount(value) > 0 ? (
        <Children value={value} open={open} />
      ) : (
        <Scalar value={value} />
      )}
    </div>
  );
});

function Children({ value, open }: { value: Container; open: Set<unknown> }) {
  const [limit, setLimit] = useState(PAGE);
  const total = childCount(value);
  const entries = useMemo(() => firstChildren(value, limit), [value, limit]);
  const array = Array.isArray(value);
  return (
    <ul className={styles.jsonList}>
      {entries.map(([key, child]) => (
        <Entry key={key} name={key} isIndex={array} value={child} open={open} />
      ))}
      {total > limit && (
        <li>
          <button
            type="button"
            className={styles.linkButton}
            onClick={() => setLimit((n) => n + PAGE)}
          >
            Show {Math.min(PAGE, total - limit)} more ({(total - limit).toLocaleString("en-US")} not
            shown)
          </button>
        </li>
      )}
    </ul>
  );
}

type EntryProps = {
  name: string;
  isIndex: boolean;
  value: unknown;
  open: Set<unknown>;
};

function Entry({ name, isIndex, value, open }: EntryProps) {
  const [expanded, setExpanded] = useState(() => open.has(value));
  const label = (
    <span className={isIndex ? styles.jsonIndex : styles.jsonKey}>{revealInvisible(name)}</span>
  );
  if (!isContainer(value) || childCount(value) === 0) {
    return (
      <li className={styles.jsonEntry}>
        {label}
        <span className={styles.jsonColon}>: </span>
        <Scalar value={value} />
      </li>
    );
  }
  const count = childCount(value);
  const array = Array.isArray(value);
  return (
    <li className={styles.jsonEntry}>
      <button
        type="button"
        className={styles.jsonToggle}
        aria-expanded={expanded}
        onClick={() => setExpanded((e) => !e)}
      >
        <span aria-hidden="true" className={styles.jsonCaret}>
          {expanded ? "▾" : "▸"}
        </span>
        {label}
        <span className={styles.jsonCount}>
          {array ? `[${count}]` : `{${count}}`}
          <span className={styles.visuallyHidden}>
            {array ? ` list of ${count}` : ` object with ${count} keys`}
          </span>
        </span>
      </button>
      {expanded && <Children value={value} open={open} />}
    </li>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") return <StringValue value={value} />;
  if (typeof value === "number") return <span className={styles.jsonNumber}>{String(value)}</span>;
  if (typeof value === "boolean") {
    return <span className={styles.jsonBoolean}>{String(value)}</span>;
  }
  if (value === null) return <span className={styles.jsonNull}>null</span>;
  if (Array.isArray(value)) return <span className={styles.jsonPunct}>[]</span>;
  if (typeof value === "object") return <span className={styles.jsonPunct}>{"{}"}</span>;
  return <span className={styles.jsonNull}>{String(value)}</span>;
}

function StringValue({ value }: { value: string }) {
  const [limit, setLimit] = useState(STRING_PREVIEW);
  const cut = value.length > limit;
  return (
    <span className={styles.jsonString}>
      &quot;{revealInvisible(cut ? value.slice(0, limit) : value)}
      {cut ? "…" : '"'}
      {cut && (
        <button
          type="button"
          className={styles.linkButton}
          onClick={() => setLimit((n) => n + STRING_STEP)}
        >
          show more ({(value.length - limit).toLocaleString("en-US")} more characters)
        </button>
      )}
      {!cut && value.length > STRING_PREVIEW && (
        <button
          type="button"
          className={styles.linkButton}
          onClick={() => setLimit(STRING_PREVIEW)}
        >
          show less
        </button>
      )}
    </span>
  );
}
