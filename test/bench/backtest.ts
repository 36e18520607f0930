import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createClient } from "@libsql/client";
import { startServer, type TestServer } from "../support/server";
import { freePortInRange } from "./cold-start";
import { GROWTH_DEFAULTS } from "./growth";
import { copyForRun, seededDatabases } from "./growth-seed";
import { keepAliveAgent, request, summarize, type Endpoint, type Summary } from "./load";
import { pauseBody } from "./targets";

// `npx tsx test/bench/backtest.ts [--quick]` (or `npm run bench -- --scenarios=backtest`): the
// policy backtest and the suggestions (lib/policies) on the growth benchmark's grown database
// (100,000 decided batches over 90 days in four queues, 1,000,000 events: growth-seed.ts), over
// HTTP against the production server, one request at a time: a 90-day backtest of one queue
// (25,000 cards) and the suggestions mined from the same 90 days. Goals: backtest under 2 s,
// suggestions under 5 s. Then whether they hold up the write path: pauses (`POST /runs`) one at a
// time, first alone, then while backtests run back to back in the same server.

export type BacktestBenchOptions = { samples: number; pauses: number };
export const BACKTEST_DEFAULTS: BacktestBenchOptions = { samples: 10, pauses: 200 };
export const BACKTEST_QUICK: BacktestBenchOptions = { samples: 4, pauses: 60 };
export const BACKTEST_GOAL_MS = 2000;
export const SUGGESTIONS_GOAL_MS = 5000;
const DAY = 86_400_000;

export type BacktestBenchResult = {
  queue: string;
  cards: number;
  matched: number;
  summary: string;
  suggestions: number;
  backtestMs: Summary;
  suggestionsMs: Summary;
  pauseAloneMs: Summary;
  pauseDuringMs: Summary;
  /** backtests completed while the pauses ran */
  backtestsDuring: number;
  batches: number;
  loadAverage: number[];
  seconds: number;
};

const log = (message: string) => console.error(message);

export async function backtestScenario(
  options: BacktestBenchOptions = BACKTEST_DEFAULTS,
): Promise<BacktestBenchResult> {
  const startedAt = Date.now();
  const { events, decidedBatches, pending } = GROWTH_DEFAULTS;
  const seeded = await seededDatabases({ events, decidedBatches, pending });
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-backtest-"));
  let server: TestServer | null = null;
  const agent = keepAliveAgent(4);
  try {
    const databaseUrl = await copyForRun(seeded.grown, dir, seeded.seededAt);
    const queueId = seeded.actors.reviewerQueueIds[0]!;
    // The bench reviewer reviews the queue; a backtest is its lead's: make them one.
    const client = createClient({ url: databaseUrl });
    const queueName = String(
      (await client.execute({ sql: "select name from queues where id = ?", args: [queueId] }))
        .rows[0]!.name,
    );
    const cards = Number(
      (
        await client.execute({
          sql: "select count(*) from batches where queue_id = ? and status <> 'pending'",
          args: [queueId],
        })
      ).rows[0]![0],
    );
    await client.execute({
      sql: "update queue_members set role = 'lead' where queue_id = ?",
      args: [queueId],
    });
    client.close();
    server = await startServer({
      databaseUrl,
      env: { COUNTERSIGN_QUIET: "1" },
      port: await freePortInRange(),
    });
    const endpoint: Endpoint = { host: "127.0.0.1", port: server.port };
    const token = seeded.actors.reviewerToken;
    // The seeded history ends when it was seeded: the 90 days end there.
    const to = new Date(seeded.seededAt + 3600_000).toISOString();
    const from = new Date(seeded.seededAt - 90 * DAY).toISOString();
    const backtestBody = {
      rule: { name: "Refunds", queue: queueId, effect: "allow", toolPattern: "refund_*" },
      from,
      to,
    };
    const backtest = () =>
      request(endpoint, agent, {
        method: "POST",
        path: "/api/v1/policy-rules/backtest",
        token,
        body: backtestBody,
      });
    const suggest = () =>
      request(endpoint, agent, {
        method: "GET",
        path: `/api/v1/policy-suggestions?queue=${queueId}&from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`,
        token,
      });
    const timed = async (what: string, call: () => ReturnType<typeof backtest>, n: number) => {
      const first = await call(); // warms the page cache, as a server up for a while has it
      if (first.status !== 200)
        throw new Error(`${what}: HTTP ${first.status} ${first.text.slice(0, 300)}`);
      const samples: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = await call();
        if (r.status !== 200) throw new Error(`${what}: HTTP ${r.status}`);
        samples.push(r.doneAt - r.sentAt);
      }
      const ms = summarize(samples);
      log(`backtest: ${what}: p50 ${ms.p50.toFixed(0)} ms, max ${ms.max.toFixed(0)} ms`);
      return { ms, body: JSON.parse(first.text) as Record<string, unknown> };
    };
    log(`backtest: 90 days of ${queueName} (${cards.toLocaleString("en")} settled cards)…`);
    const bt = await timed("backtest, 90 days", backtest, options.samples);
    const sg = await timed(
      "suggestions, 90 days",
      suggest,
      Math.max(3, Math.ceil(options.samples / 2)),
    );

    const pauses = async (label: string) => {
      const samples: number[] = [];
      for (let i = 0; i < options.pauses; i++) {
        const r = await request(endpoint, agent, {
          method: "POST",
          path: "/api/v1/runs",
          token: seeded.actors.agentKey,
          body: pauseBody(`backtest-bench-${label}-${i}-${Date.now().toString(36)}`),
        });
        if (r.status !== 201) throw new Error(`pause: HTTP ${r.status} ${r.text.slice(0, 200)}`);
        samples.push(r.doneAt - r.sentAt);
      }
      return summarize(samples);
    };
    log(`backtest: ${options.pauses} pauses alone…`);
    const alone = await pauses("alone");
    log(`backtest: ${options.pauses} pauses while backtests run back to back…`);
    let running = true;
    let during = 0;
    const background = (async () => {
      const own = new http.Agent({ keepAlive: true, maxSockets: 1 });
      while (running) {
        const r = await request(endpoint, own, {
          method: "POST",
          path: "/api/v1/policy-rules/backtest",
          token,
          body: backtestBody,
        });
        if (r.status === 200) during++;
      }
      own.destroy();
    })();
    // let the first backtest get under way
    await new Promise((resolve) => setTimeout(resolve, 200));
    const busy = await pauses("during");
    running = false;
    await background;
    log(
      `backtest: pause p50/p99 alone ${alone.p50.toFixed(0)}/${alone.p99.toFixed(0)} ms, during ${busy.p50.toFixed(0)}/${busy.p99.toFixed(0)} ms (${during} backtests meanwhile)`,
    );
    const calls = bt.body.calls as { matched: number };
    return {
      queue: queueName,
      cards,
      matched: calls.matched,
      summary: String(bt.body.summary),
      suggestions: (sg.body.suggestions as unknown[]).length,
      backtestMs: bt.ms,
      suggestionsMs: sg.ms,
      pauseAloneMs: alone,
      pauseDuringMs: busy,
      backtestsDuring: during,
      batches: seeded.grownCounts.batches,
      loadAverage: loadavg(),
      seconds: (Date.now() - startedAt) / 1000,
    };
  } finally {
    agent.destroy();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export function backtestReport(r: BacktestBenchResult): string[] {
  const met = (ms: number, goal: number) => (ms < goal ? "met" : "**missed**");
  const ms = (s: Summary) => `${s.p50.toFixed(0)} / ${s.p99.toFixed(0)} / ${s.max.toFixed(0)} ms`;
  return [
    "### Backtest and suggestions on the grown database",
    "",
    `Over HTTP against \`dist/server.js\`, one request at a time, on the grown database (${r.batches.toLocaleString("en")} batches); queue ${r.queue}, ${r.cards.toLocaleString("en")} settled cards in 90 days. The backtest (allow \`refund_*\`) ${r.summary}; ${r.suggestions} suggestion(s) mined. Load average at the end: ${r.loadAverage.map((l) => l.toFixed(2)).join(", ")}; ${r.seconds.toFixed(0)} s in all.`,
    "",
    "| measurement | samples | p50 / p99 / max | goal |",
    "| --- | ---: | ---: | --- |",
    `| \`POST /policy-rules/backtest\`, 90 days of one queue | ${r.backtestMs.n} | ${ms(r.backtestMs)} | < ${BACKTEST_GOAL_MS} ms — ${met(r.backtestMs.max, BACKTEST_GOAL_MS)} |`,
    `| \`GET /policy-suggestions\`, 90 days of one queue | ${r.suggestionsMs.n} | ${ms(r.suggestionsMs)} | < ${SUGGESTIONS_GOAL_MS} ms — ${met(r.suggestionsMs.max, SUGGESTIONS_GOAL_MS)} |`,
    `| pause (\`POST /runs\`), alone | ${r.pauseAloneMs.n} | ${ms(r.pauseAloneMs)} | |`,
    `| pause while backtests run back to back (${r.backtestsDuring} ran) | ${r.pauseDuringMs.n} | ${ms(r.pauseDuringMs)} | not blocked |`,
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const quick = process.argv.includes("--quick");
  backtestScenario(quick ? BACKTEST_QUICK : BACKTEST_DEFAULTS)
    .then((result) => {
      console.log(backtestReport(result).join("\n"));
      process.exit(0);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
