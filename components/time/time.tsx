"use client";

import { useSyncExternalStore } from "react";
import { formatDateTime, formatRelative, formatShortDateTime } from "@/lib/time/format";
import styles from "./time.module.css";
import { useViewerTimeFormat } from "./time-zone-provider";

// Every time a page shows goes through <Time>: written in the viewer's zone (their own choice,
// else their browser's), machine-readable in dateTime, the exact time with its zone on hover.

const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

/** One shared ticker for every relative time on the page: "4 min ago" stays true. */
function subscribe(listener: () => void) {
  listeners.add(listener);
  timer ??= setInterval(() => listeners.forEach((notify) => notify()), 5_000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** To the tick: a stable snapshot between ticks, as useSyncExternalStore requires. */
const readClock = () => Math.floor(Date.now() / 5_000) * 5_000;

/**
 * The current time, ticking. The first render (on the server, and hydration in the browser)
 * uses `renderedAt`, the page's own clock, so both write the same text; the browser's clock
 * takes over right after. Without one (a client-only list), null until then: no relative text
 * that the server and the browser would write differently.
 */
function useNow(renderedAt: number | undefined): number | null {
  return useSyncExternalStore(subscribe, readClock, () => renderedAt ?? null);
}

export type TimeVariant = "inline" | "stacked" | "short" | "relative" | "exact";

/**
 * - `relative`: "4 min ago", the exact time in the tooltip
 * - `inline`: "22 Nov 2026, 09:49:25 GMT+5:30 · 4 min ago"
 * - `stacked`: the same on two lines, for narrow panels
 * - `short`: "22 Nov, 09:49" over "4 min ago", for tables (the exact time in the tooltip)
 * - `exact`: "22 Nov 2026, 09:49:25 GMT+5:30", how long ago in the tooltip (audit trails)
 */
// suppressHydrationWarning on each <time>: the server's ICU and the browser's may spell a month
// differently ("Sept" / "Sep"); the next tick writes the browser's spelling.
export function Time({
  iso,
  now,
  variant = "relative",
}: {
  iso: string;
  /** the page's render clock, read once by the server (the same for every time on the page) */
  now?: number;
  variant?: TimeVariant;
}) {
  const format = useViewerTimeFormat();
  const nowMs = useNow(now);
  const exact = formatDateTime(iso, format);
  const relative = nowMs === null ? "" : formatRelative(iso, nowMs);
  if (variant === "exact") {
    return (
      <time
        dateTime={iso}
        title={relative || undefined}
        className={styles.time}
        suppressHydrationWarning
      >
        {exact}
      </time>
    );
  }
  if (variant === "relative") {
    return (
      <time dateTime={iso} title={exact} className={styles.time} suppressHydrationWarning>
        {relative || exact}
      </time>
    );
  }
  return (
    <span className={variant === "inline" ? styles.inline : styles.stacked}>
      <time
        dateTime={iso}
        className={styles.time}
        title={variant === "short" ? exact : undefined}
        suppressHydrationWarning
      >
        {variant === "short" ? formatShortDateTime(iso, nowMs ?? Date.parse(iso), format) : exact}
      </time>
      {relative && <span className={styles.relative}>{relative}</span>}
    </span>
  );
}
