import { z } from "zod";
import { parseInput } from "@/lib/input/parse";
import { isoTime } from "@/lib/ids";
import { endOfLocalDay, startOfLocalDay } from "@/lib/time/local-day";
import { DEFAULT_TIME_ZONE, TimeZoneName } from "@/lib/time/zone";
import type { QueueCaller } from "@/lib/queues/queue-access";
import { readInsights, type Insights } from "./read-insights";

// `GET /api/v1/insights`: the insights page's numbers as JSON, for a team's own dashboards.
// Dates as the history filters take them: a whole day in `timeZone` (`2026-03-01`, default UTC)
// or an ISO-8601 time; day bars are that zone's calendar days.

const DateOrTime = z.union([z.iso.date(), z.iso.datetime({ offset: true })]);
const DAY_MS = 86_400_000;
const DEFAULT_SPAN_MS = 7 * DAY_MS;

export const InsightsQuery = z.object({
  queue: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("a queue id (one you lead, or any for an admin); none: all of them together"),
  from: DateOrTime.optional().describe(
    "the period's start, inclusive (a date is its first instant in timeZone); default: 7 days before `to`",
  ),
  to: DateOrTime.optional().describe(
    "the period's end, exclusive (a date includes that whole day in timeZone); default: now",
  ),
  timeZone: TimeZoneName.optional().describe(
    "the IANA zone whose calendar days a date names and the day bars are (default UTC)",
  ),
});
export type InsightsQuery = z.infer<typeof InsightsQuery>;

const isDay = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value);
const startOf = (value: string, zone: string) =>
  isDay(value) ? startOfLocalDay(value, zone) : Date.parse(value);
const endOf = (value: string, zone: string) =>
  isDay(value) ? endOfLocalDay(value, zone) + 1 : Date.parse(value);

/** The insights of the query's queue and period, with times as ISO strings. */
export async function queryInsights(caller: QueueCaller, query: unknown) {
  const { queue, from, to, timeZone = DEFAULT_TIME_ZONE } = parseInput(InsightsQuery, query ?? {});
  const end = to ? endOf(to, timeZone) : Date.now();
  const start = from ? startOf(from, timeZone) : end - DEFAULT_SPAN_MS;
  return insightsResource(
    await readInsights(caller, { queueId: queue, from: start, to: end, timeZone }),
  );
}

function insightsResource(insights: Insights) {
  return {
    ...insights,
    period: {
      from: isoTime(insights.period.from),
      to: isoTime(insights.period.to),
      bucketMs: insights.period.bucketMs,
    },
    series: insights.series.map((bar) => ({ ...bar, start: isoTime(bar.start) })),
  };
}
