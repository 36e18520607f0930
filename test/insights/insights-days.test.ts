import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches, events, runs } from "@/db/schema";
import { authenticate } from "@/lib/auth/actor";
import { newId } from "@/lib/ids";
import { InsightsSearch, periodOf } from "@/lib/insights/insights-period";
import { queryInsights } from "@/lib/insights/insights-query";
import { readInsights } from "@/lib/insights/read-insights";
import { localDate } from "@/lib/time/local-day";
import { freshDatabase } from "@/test/support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "@/test/support/factories";

// Insights in the viewer's days: a card decided on the 27th where the viewer is (History says
// the 27th) counts under the 27th, today's cards under today; the custom range is a period of its
// own, refused on its field when reversed or when its days come with a preset; and an escalation
// counts when it happens, before its card is decided.

const MIN = 60_000;
const KOLKATA = "Asia/Kolkata"; // UTC+5:30
// 2026-01-26T20:00Z is 01:30 on the 27th in Kolkata
const DECIDED_AT = Date.UTC(2026, 0, 26, 20, 0);
// the page is read at 11:30 on the 27th in Kolkata
const NOW = Date.UTC(2026, 0, 27, 6, 0);

let lead: Awaited<ReturnType<typeof authenticate>>;
let queueId: string;
let pendingEscalated: string;

async function card(createdAt: number, decidedAt: number | null) {
  const db = getDb();
  const runId = newId();
  const batchId = newId();
  await db.insert(runs).values({
    id: runId,
    agentKeyId: agentId,
    queueId,
    status: decidedAt === null ? "waiting_approval" : "ready",
    createdAt,
    updatedAt: createdAt,
  });
  await db.insert(batches).values({
    id: batchId,
    runId,
    queueId,
    kind: "action",
    status: decidedAt === null ? "pending" : "decided",
    onTimeout: "escalate",
    createdAt,
    expiresAt: createdAt + 10 * MIN,
    decidedAt,
  });
  return { runId, batchId };
}

let agentId: string;

beforeAll(async () => {
  await freshDatabase("insights-days");
  const queue = await makeQueue({ name: "days" });
  const other = await makeQueue({ name: "days-escalations" });
  queueId = queue.id;
  const person = await makeReviewer({ queues: [{ name: "days", role: "lead" }] });
  lead = await authenticate(getDb(), new Headers({ authorization: `Bearer ${person.token}` }));
  agentId = (await makeAgentKey({ queues: ["days"] })).id;
  await card(DECIDED_AT - 5 * MIN, DECIDED_AT);
  // escalated on the 25th (Kolkata), still pending: the escalation counts on the day it happened
  const escalatedAt = Date.UTC(2026, 0, 25, 10, 0);
  const { runId, batchId } = await card(escalatedAt - 10 * MIN, null);
  pendingEscalated = batchId;
  for (const q of [queue.id, other.id])
    await getDb()
      .insert(events)
      .values({
        type: "batch.escalated",
        at: escalatedAt,
        runId,
        batchId,
        queueId: q,
        actorKind: "system",
        data: { escalations: 1 },
      });
}, 60_000);

const barOfDay = (series: { start: number; settled: number }[], day: string) =>
  series.find((bar) => localDate(bar.start, KOLKATA) === day);

describe("insights days are the viewer's calendar days", () => {
  it("a custom range: the card decided on the 27th in Kolkata counts under the 27th", async () => {
    const search = InsightsSearch.parse({ period: "custom", from: "2026-01-21", to: "2026-01-27" });
    const period = periodOf(search, NOW, KOLKATA);
    expect(localDate(period.from, KOLKATA)).toBe("2026-01-21");
    const insights = await readInsights(lead, { queueId, ...period, timeZone: KOLKATA });
    expect(insights.series).toHaveLength(7);
    // every bar starts at a Kolkata midnight
    for (const bar of insights.series)
      expect(new Date(bar.start + 5.5 * 60 * MIN).toISOString()).toMatch(/T00:00:00/);
    expect(barOfDay(insights.series, "2026-01-27")!.settled).toBe(1);
    expect(barOfDay(insights.series, "2026-01-26")!.settled).toBe(0);
  });

  it("Last 7 days: the last bar is today, and today's card is in it", async () => {
    const search = InsightsSearch.parse({ period: "7d" });
    const period = periodOf(search, NOW, KOLKATA);
    expect(localDate(period.from, KOLKATA)).toBe("2026-01-21");
    expect(period.to).toBe(NOW);
    const insights = await readInsights(lead, { queueId, ...period, timeZone: KOLKATA });
    const last = insights.series.at(-1)!;
    expect(localDate(last.start, KOLKATA)).toBe("2026-01-27");
    expect(last.settled).toBe(1);
  });

  it("GET /api/v1/insights takes the days in its timeZone", async () => {
    const answer = await queryInsights(lead, {
      queue: queueId,
      from: "2026-01-27",
      to: "2026-01-27",
      timeZone: KOLKATA,
    });
    expect(answer.period.from).toBe("2026-01-26T18:30:00.000Z");
    expect(answer.period.to).toBe("2026-01-27T18:30:00.000Z");
    expect(answer.totals.decided).toBe(1);
  });
});

describe("escalations count when they happen", () => {
  it("a card escalated in the period and not decided yet is counted", async () => {
    const search = InsightsSearch.parse({ period: "custom", from: "2026-01-25", to: "2026-01-25" });
    const insights = await readInsights(lead, {
      queueId,
      ...periodOf(search, NOW, KOLKATA),
      timeZone: KOLKATA,
    });
    expect(insights.totals).toMatchObject({ escalations: 1, escalatedCards: 1, decided: 0 });
    expect(insights.perQueue[0]).toMatchObject({ escalatedCards: 1 });
    expect(pendingEscalated).toBeTruthy();
  });
});

describe("the period form's rules, each on its field", () => {
  const issues = (search: Record<string, string>) => {
    const parsed = InsightsSearch.safeParse(search);
    return parsed.success
      ? []
      : parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  };

  it("refuses days given with a preset, instead of ignoring them", () => {
    expect(issues({ period: "7d", from: "2026-01-01", to: "2026-01-05" })).toEqual([
      { path: "from", message: "Days are for a custom range: choose Custom range as the period" },
      { path: "to", message: "Days are for a custom range: choose Custom range as the period" },
    ]);
  });

  it("refuses a reversed custom range on its last day", () => {
    expect(issues({ period: "custom", from: "2026-01-05", to: "2026-01-01" })).toEqual([
      { path: "to", message: "The last day is before the first day (2026-01-05)" },
    ]);
  });

  it("asks for each missing day on its own field", () => {
    expect(issues({ period: "custom" })).toEqual([
      { path: "from", message: "Enter the first day" },
      { path: "to", message: "Enter the last day" },
    ]);
  });
});
