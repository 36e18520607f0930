import { formatAbsolute, formatRelative, formatShort } from "./format";
import styles from "./time-stamp.module.css";

/**
 * A time, machine-readable in dateTime, and how long ago it was:
 * - `inline`: "22 Nov 2026, 04:19:25 UTC · 4 min ago"
 * - `stacked`: the same on two lines, for narrow panels
 * - `short`: "22 Nov, 04:19" over "4 min ago", for tables (say UTC in the column header)
 * - `relative`: "4 min ago", the absolute time in a tooltip
 */
export function TimeStamp({
  iso,
  now,
  variant = "inline",
}: {
  iso: string;
  /** the render's clock, read once by the page */
  now: number;
  variant?: "inline" | "stacked" | "short" | "relative";
}) {
  const absolute = formatAbsolute(iso);
  const relative = formatRelative(iso, now);
  if (variant === "relative") {
    return (
      <time dateTime={iso} title={absolute} className={styles.time}>
        {relative}
      </time>
    );
  }
  return (
    <span className={variant === "inline" ? styles.inline : styles.stacked}>
      <time
        dateTime={iso}
        className={styles.time}
        title={variant === "short" ? absolute : undefined}
      >
        {variant === "short" ? formatShort(iso, now) : absolute}
      </time>
      {relative && <span className={styles.relative}>{relative}</span>}
    </span>
  );
}
