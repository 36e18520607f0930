import { z } from "zod";

// The period an insights view covers, as the page's URL spells it (`?period=7d`, or
// `?period=custom&from=2026-01-01&to=2026-01-31`, whole UTC days) and as the verb takes it
// (milliseconds, `from` inclusive, `to` exclusive).

export const PERIOD_PRESETS = ["24h", "7d", "30d", "90d"] as const;
export type PeriodPreset = (typeof PERIOD_PRESETS)[number];

const PRESET_MS: Record<PeriodPreset, number> = {
  "24h": 24 * 3_600_000,
  "7d": 7 * 86_400_000,
  "30d": 30 * 86_400_000,
  "90d": 90 * 86_400_000,
};

export const PERIOD_LABELS: Record<PeriodPreset | "custom", string> = {
  "24h": "Last 24 hours",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
  custom: "Custom",
};

/** The longest period one view may cover: a year of history keeps every query bounded. */
export const MAX_PERIOD_MS = 366 * 86_400_000;

const Day = z.iso.date();

/** The page's search params (strings, as the URL has them). */
export const InsightsSearch = z
  .object({
    period: z.enum([...PERIOD_PRESETS, "custom"]).default("7d"),
    from: Day.optional(),
    to: Day.optional(),
    queue: z.string().min(1).max(200).optional(),
  })
  .refine((s) => s.period !== "custom" || (s.from !== undefined && s.to !== undefined), {
    message: "a custom period needs both a first and a last day",
    path: ["from"],
  })
  .refine((s) => s.period !== "custom" || !s.from || !s.to || s.from <= s.to, {
    message: "the first day is after the last day",
    path: ["from"],
  });
export type InsightsSearch = z.infer<typeof InsightsSearch>;

export type Period = { from: number; to: number };

const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The period the search params name, measured back from `now` for a preset. */
export function periodOf(search: InsightsSearch, now: number): Period {
  if (search.period === "custom") {
    return { from: dayStart(search.from!), to: dayStart(search.to!) + 86_400_000 };
  }
  return { from: now - PRESET_MS[search.period], to: now };
}

/**
 * How wide a bar of the activity chart is: an hour over two days or less, a day up to 120 days,
 * a week beyond (so a chart never has more than about 50–120 bars).
 */
export function bucketMsFor(period: Period): number {
  const span = period.to - period.from;
  if (span <= 2 * 86_400_000) return 3_600_000;
  if (span <= 120 * 86_400_000) return 86_400_000;
  return 7 * 86_400_000;
}
