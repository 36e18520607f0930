import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { closeDb, getClient } from "@/db/client";
import { readInsights } from "@/lib/insights/read-insights";
import { OPERATOR } from "@/lib/queues/queue-access";
import { GROWTH_DEFAULTS } from "./growth";
import { copyForRun, seededDatabases } from "./growth-seed";
import { summarize, type Summary } from "./load";

// The insights page's reads (lib/insights/read-insights.ts) on the growth benchmark's grown
// database (1 M events, 100 k decided batches over 90 days, four queues: growth-seed.ts), in this
// process, one at a time: one queue and all four, over the last 7 and the last 90 days. Each
// sample is a whole `readInsights` (the read batch of five queries, the name lookups, the
// assembly) as the page calls it. The goal: the 90-day view of every queue under a second at p99.

export type InsightsBenchOptions = { samples: number };
export const INSIGHTS_DEFAULTS: InsightsBenchOptions = { samples: 40 };
export const INSIGHTS_QUICK: InsightsBenchOptions = { samples: 12 };
export const INSIGHTS_GOAL_MS = 1000;

const DAY = 86_400_000;

export type InsightsRow = {
  scope: string;
  days: number;
  /** cards created in the period, as the view counts them (a check that it read the history) */
  cards: number;
  ms: Summary;
};

export type InsightsBenchResult = {
  rows: InsightsRow[];
  batches: number;
  events: number;
  loadAverage: number[];
  seconds: number;
};

const log = (message: string) => console.error(message);

export async function insightsScenario(
  options: InsightsBenchOptions = INSIGHTS_DEFAULTS,
): Promise<InsightsBenchResult> {
  const startedAt = Date.now();
  const { events, decidedBatches, pending } = GROWTH_DEFAULTS;
  const seeded = await seededDatabases({ events, decidedBatches, pending });
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-insights-"));
  const previousUrl = process.env.DATABASE_URL;
  try {
    process.env.DATABASE_URL = await copyForRun(seeded.grown, dir, seeded.seededAt);
    closeDb();
    const { rows: queueRows } = await getClient().execute(
      "select id, name from queues order by name",
    );
    const one = queueRows.find((q) => q.id === seeded.actors.reviewerQueueIds[0]) ?? queueRows[0]!;
    // The seeded history ends when it was seeded: periods end there, as "the last N days" did then.
    const end = seeded.seededAt;
    const cases = [
      { scope: `one queue (${String(one.name)})`, queueId: String(one.id), days: 7 },
      { scope: "one queue", queueId: String(one.id), days: 90 },
      { scope: `all ${queueRows.length} queues`, queueId: undefined, days: 7 },
      { scope: `all ${queueRows.length} queues`, queueId: undefined, days: 90 },
    ];
    const rows: InsightsRow[] = [];
    for (const c of cases) {
      const input = { queueId: c.queueId, from: end - c.days * DAY, to: end };
      // one unmeasured read warms the page cache, as a server that has been up a while has it
      const warm = await readInsights(OPERATOR, input);
      const samples: number[] = [];
      for (let i = 0; i < options.samples; i++) {
        const t = performance.now();
        await readInsights(OPERATOR, input);
        samples.push(performance.now() - t);
      }
      const row = {
        scope: c.scope,
        days: c.days,
        cards: warm.totals.created,
        ms: summarize(samples),
      };
      log(
        `insights: ${row.scope}, ${row.days} days: p50 ${row.ms.p50.toFixed(1)} ms, p99 ${row.ms.p99.toFixed(1)} ms`,
      );
      rows.push(row);
    }
    return {
      rows,
      batches: seeded.grownCounts.batches,
      events: seeded.grownCounts.events,
      loadAverage: loadavg(),
      seconds: (Date.now() - startedAt) / 1000,
    };
  } finally {
    closeDb();
    if (previousUrl === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previousUrl;
    rmSync(dir, { recursive: true, force: true });
  }
}

export function insightsReport(result: InsightsBenchResult): string[] {
  const worst = Math.max(...result.rows.map((r) => r.ms.p99));
  return [
    "### Insights on the grown database",
    "",
    `The insights page's reads (\`readInsights\`, in process, one at a time) over ${result.batches.toLocaleString("en")} batches and ${result.events.toLocaleString("en")} events; ${result.rows[0]?.ms.n ?? 0} samples each after one warm-up. Goal: p99 under ${INSIGHTS_GOAL_MS} ms — ${worst < INSIGHTS_GOAL_MS ? "met" : "**missed**"} (worst p99 ${worst.toFixed(0)} ms). Load average at the end: ${result.loadAverage.map((l) => l.toFixed(2)).join(", ")}.`,
    "",
    "| scope | period | cards created | p50 ms | p99 ms |",
    "| --- | --- | ---: | ---: | ---: |",
    ...result.rows.map(
      (r) =>
        `| ${r.scope} | ${r.days} days | ${r.cards.toLocaleString("en")} | ${r.ms.p50.toFixed(1)} | ${r.ms.p99.toFixed(1)} |`,
    ),
  ];
}
