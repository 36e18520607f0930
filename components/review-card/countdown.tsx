"use client";

import { timeoutRuleText } from "./decision-text";
import { formatAgo, formatDateTime, formatRemaining, parseTime } from "./format";
import styles from "./review-card.module.css";
import { useTimeFormat } from "./time-context";
import type { TimeoutAction } from "./types";
import { useClock, useSecondsLeft } from "./use-clock";

const URGENT_MS = 60_000;

/**
 * Time left before the deadline and what the deadline does. Ticks every second, but is not a live
 * region: a screen reader reads it when the reviewer gets there, not sixty times a minute.
 */
export function Countdown(props: {
  expiresAt: string;
  onTimeout: TimeoutAction;
  now: () => number;
}) {
  const timeFormat = useTimeFormat();
  const end = parseTime(props.expiresAt) ?? 0;
  const left = useSecondsLeft(end, props.now, true) * 1000;
  const urgent = left < URGENT_MS;
  return (
    <p
      className={urgent ? `${styles.deadline} ${styles.deadlineUrgent}` : styles.deadline}
      data-testid="countdown"
      data-urgent={urgent}
    >
      <span aria-hidden="true" className={styles.deadlineIcon}>
        ◷
      </span>
      {left > 0 ? (
        <span role="timer">
          <time
            dateTime={props.expiresAt}
            title={formatDateTime(props.expiresAt, timeFormat)}
            suppressHydrationWarning
          >
            {formatRemaining(left)}
          </time>{" "}
          left
        </span>
      ) : (
        <span>Deadline passed</span>
      )}
      <span className={styles.deadlineRule}>{timeoutRuleText(props.onTimeout)}</span>
    </p>
  );
}

/** "4 s ago", kept fresh; the exact time (in the card's zone) is in the tooltip. */
export function Ago({ at, now }: { at: string; now: () => number }) {
  const nowMs = useClock(now, true);
  const timeFormat = useTimeFormat();
  const ms = parseTime(at);
  if (ms === null) return null;
  return (
    <time dateTime={at} title={formatDateTime(at, timeFormat)} suppressHydrationWarning>
      {formatAgo(ms, nowMs)}
    </time>
  );
}
