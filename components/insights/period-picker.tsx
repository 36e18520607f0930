"use client";

import { useRef } from "react";
import { FieldError } from "@/components/forms/field-error";
import { errorIdFor } from "@/components/forms/use-field-errors";
import type { Named } from "@/lib/insights/read-insights";
import { PERIOD_LABELS, PERIOD_PRESETS, type InsightsSearch } from "@/lib/insights/insights-period";
import styles from "./insights.module.css";

/** The picker's fields as the URL names them: a problem with one is shown under it. */
export type PeriodFieldErrors = Partial<Record<"queue" | "period" | "from" | "to", string>>;

/**
 * The period picker: a GET form, so the period lives in the URL (and can be shared). A custom
 * range is a period of its own: typing a day chooses it, and the server refuses days sent with
 * a preset (they would be ignored) and a last day before the first, each under its field.
 */
export function PeriodPicker({
  search,
  queues,
  timeZone,
  errors = {},
}: {
  search: Partial<InsightsSearch>;
  queues: Named[];
  /** the zone whose calendar days the periods are */
  timeZone: string;
  errors?: PeriodFieldErrors;
}) {
  const period = useRef<HTMLSelectElement>(null);
  const from = useRef<HTMLInputElement>(null);
  const to = useRef<HTMLInputElement>(null);
  const field = (name: keyof PeriodFieldErrors, id: string) =>
    errors[name]
      ? { "aria-invalid": true as const, "aria-describedby": errorIdFor(id) }
      : { "aria-invalid": undefined };
  const chooseCustom = () => {
    if (period.current) period.current.value = "custom";
  };
  // Choosing a preset after a custom range empties the days, which a preset does not use.
  const choosePeriod = () => {
    if (period.current?.value === "custom") return;
    for (const day of [from.current, to.current]) if (day) day.value = "";
  };
  return (
    <form
      method="get"
      action="/insights"
      className={styles.picker}
      aria-label="Choose the queue and period"
      noValidate
    >
      <div className={styles.field}>
        <label htmlFor="insights-queue">Queue</label>
        <select
          id="insights-queue"
          name="queue"
          defaultValue={search.queue ?? ""}
          {...field("queue", "insights-queue")}
        >
          <option value="">
            All {queues.length === 1 ? "(one queue)" : `${queues.length} queues`}
          </option>
          {queues.map((q) => (
            <option key={q.id} value={q.id}>
              {q.name}
            </option>
          ))}
        </select>
        <FieldError controlId="insights-queue" message={errors.queue} />
      </div>
      <div className={styles.field}>
        <label htmlFor="insights-period">Period</label>
        <select
          id="insights-period"
          name="period"
          ref={period}
          defaultValue={search.period ?? "7d"}
          onChange={choosePeriod}
          {...field("period", "insights-period")}
        >
          {[...PERIOD_PRESETS, "custom" as const].map((p) => (
            <option key={p} value={p}>
              {PERIOD_LABELS[p]}
            </option>
          ))}
        </select>
        <FieldError controlId="insights-period" message={errors.period} />
      </div>
      {(
        [
          ["from", "First day", from],
          ["to", "Last day", to],
        ] as const
      ).map(([name, label, ref]) => (
        <div className={styles.field} key={name}>
          <label htmlFor={`insights-${name}`}>{label} (custom range)</label>
          <input
            id={`insights-${name}`}
            name={name}
            ref={ref}
            type="date"
            defaultValue={search[name] ?? ""}
            onInput={chooseCustom}
            {...field(name, `insights-${name}`)}
          />
          <FieldError controlId={`insights-${name}`} message={errors[name]} />
        </div>
      ))}
      <button type="submit" className={styles.show}>
        Show
      </button>
      <p className={styles.hint} data-testid="insights-days-zone">
        Days are calendar days in {timeZone}; a custom range includes its first and last day.
      </p>
    </form>
  );
}
