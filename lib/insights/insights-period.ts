import { z } from "zod";
import { endOfLocalDay, localDate, startOfLocalDay } from "@/lib/time/local-day";

// The period an insights view covers, as the page's URL spells it (`?period=7d`, or
// `?period=custom&from=2026-01-01&to=2026-01-31`) and as the verb takes it (milliseconds, `from`
// inclusive, `to` exclusive). Days are calendar days in the viewer's time zone (lib/time): cards
// decided on the 27th where the viewer is count under the 27th, as History shows them.

export const PERIOD_PRESETS = ["24h", "7d", "30d", "90d"] as const;
export type PeriodPreset = (typeof PERIOD_PRESETS)[number];

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** How many calendar days a day preset covers, today included. */
const PRESET_DAYS: Record<Exclude<PeriodPreset, "24h">, number> = { "7d": 7, "30d": 30, "90d": 90 };

export const PERIOD_LABELS: Record<PeriodPreset | "custom", string> = {
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
  custom: "Custom range",
};

/** The longest period one view may cover: a year of history keeps every query bounded. */
export const MAX_PERIOD_MS = 366 * DAY_MS;

const Day = z.iso.date("a date like 2026-03-01");

/**
 * The page's search params (strings, as the URL has them). Each problem names the field it is
 * about, so the form shows it there: days given with a preset are not dropped without a word.
 */
export const InsightsSearch = z
  .object({
    period: z.enum([...PERIOD_PRESETS, "custom"]).default("7d"),
    from: Day.optional(),
    to: Day.optional(),
    queue: z.string().min(1).max(200).optional(),
  })
  .superRefine((s, ctx) => {
    if (s.period !== "custom") {
      for (const key of ["from", "to"] as const)
        if (s[key] !== undefined)
          ctx.addIssue({
            code: "custom",
            path: [key],
            message: "Days are for a custom range: choose Custom range as the period",
          });
      return;
    }
    if (s.from === undefined)
      ctx.addIssue({ code: "custom", path: ["from"], message: "Enter the first day" });
    if (s.to === undefined)
      ctx.addIssue({ code: "custom", path: ["to"], message: "Enter the last day" });
    if (s.from !== undefined && s.to !== undefined && s.from > s.to)
      ctx.addIssue({
        code: "custom",
        path: ["to"],
        message: `The last day is before the first day (${s.from})`,
      });
  });
export type InsightsSearch = z.infer<typeof InsightsSearch>;

export type Period = { from: number; to: number };

/** The calendar day `days` after `day` (negative: before). */
function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The period the search params name in `timeZone`: a custom range from its first day's first
 * instant to its last day's end; "Last N days" the last N calendar days, today included, up to
 * now; "Last 24 hours" the rolling 24 hours before now.
 */
export function periodOf(search: InsightsSearch, now: number, timeZone: string): Period {
  if (search.period === "custom") {
    return {
      from: startOfLocalDay(search.from!, timeZone),
      to: endOfLocalDay(search.to!, timeZone) + 1,
    };
  }
  if (search.period === "24h") return { from: now - 24 * HOUR_MS, to: now };
  const today = localDate(now, timeZone);
  return {
    from: startOfLocalDay(addDays(today, 1 - PRESET_DAYS[search.period]), timeZone),
    to: now,
  };
}

/**
 * How wide a bar of the activity chart is: an hour over two days or less, a day up to 120 days,
 * a week beyond (so a chart never has more than about 50–120 bars). Day and week bars are
 * calendar days of the viewer's zone (23 or 25 hours on a DST day), so this is their nominal width.
 */
export function bucketMsFor(period: Period): number {
  const span = period.to - period.from;
  if (span <= 2 * DAY_MS) return HOUR_MS;
  if (span <= 120 * DAY_MS) return DAY_MS;
  return 7 * DAY_MS;
}

/**
 * Where each bar of the period starts: every hour from `from` for hourly bars; else at each
 * local midnight in `timeZone` (every 7th for weekly bars), the first bar starting at `from`.
 */
export function barStarts(period: Period, bucketMs: number, timeZone: string): number[] {
  if (bucketMs < DAY_MS) {
    return Array.from(
      { length: Math.ceil((period.to - period.from) / bucketMs) },
      (_, i) => period.from + i * bucketMs,
    );
  }
  const step = Math.round(bucketMs / DAY_MS);
  const starts = [period.from];
  let day = localDate(period.from, timeZone);
  for (;;) {
    day = addDays(day, step);
    const start = startOfLocalDay(day, timeZone);
    if (start >= period.to) return starts;
    if (start > starts[starts.length - 1]!) starts.push(start);
  }
}
