import { z } from "zod";
import { DECISION_SOURCES } from "@/db/schema";
import { parseInput } from "@/lib/api/parse";
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

const Count = z.int().nonnegative();
const Outcomes = { approved: Count, rejected: Count };
const Named = { id: z.string(), name: z.string() };
const Share = z.number().min(0).max(1).nullable();
const FatigueCounts = {
  ...Outcomes,
  quickApprovals: Count.describe("approving votes cast within quickMs of the card appearing"),
  quickShare: Share.describe("quickApprovals / approved; null without approvals"),
  approvalRate: Share.describe("approved / (approved + rejected); null without votes"),
};

/** The answer, for the OpenAPI document (lib/api/resource-schemas.ts). */
export const InsightsResource = z.object({
  period: z.object({
    from: z.string().describe("inclusive"),
    to: z.string().describe("exclusive"),
    bucketMs: z.int().describe("the width of each `series` bar: an hour, a day or a week"),
  }),
  queues: z.array(z.object(Named)).describe("the queues the caller may see insights of"),
  queueId: z.string().nullable().describe("the queue covered; null: all of `queues`"),
  totals: z.object({
    created: Count,
    decided: Count.describe("settled by decisions"),
    expired: Count.describe("settled at a deadline nobody met (deadlines missed)"),
    cancelled: Count.describe("withdrawn by their agent"),
    escalatedCards: Count.describe("cards escalated out of the queues in the period, each once"),
    escalations: Count.describe("escalations in the period, counted when they happened"),
  }),
  timeToDecision: z
    .object({
      count: Count,
      p50Ms: z.number().nullable(),
      p90Ms: z.number().nullable(),
      p99Ms: z.number().nullable(),
    })
    .describe("creation to settling, over settled cards that waited (nearest-rank percentiles)"),
  series: z.array(z.object({ start: z.string(), created: Count, settled: Count })),
  bySource: z.array(z.object({ source: z.enum(DECISION_SOURCES), ...Outcomes })),
  byTool: z.array(z.object({ tool: z.string(), ...Outcomes })),
  byAgent: z.array(z.object({ ...Named, ...Outcomes })),
  reviewers: z
    .array(z.object({ ...Named, ...Outcomes }))
    .describe("votes each reviewer cast on the period's cards"),
  fatigue: z
    .object({
      quickMs: z.int().describe("an approval sooner than this after the card appeared is quick"),
      byReviewer: z.array(z.object({ ...Named, ...FatigueCounts })),
      byTool: z.array(z.object({ tool: z.string(), ...FatigueCounts })),
    })
    .describe(
      "approval fatigue: each reviewer's and each tool's votes on the period's cards (people only: policy, remembered and deadline decisions cast none), how many approvals came within quickMs of the card appearing (its creation, or its latest escalation into the queue before the vote), most quick approvals first",
    ),
  perQueue: z.array(
    z.object({
      ...Named,
      created: Count,
      decided: Count,
      expired: Count,
      cancelled: Count,
      escalatedCards: Count,
    }),
  ),
});
