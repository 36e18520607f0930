import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { cpus, loadavg, platform, release, tmpdir } from "node:os";
import { join } from "node:path";
import { closeDb } from "@/db/client";
import {
  browserConfig,
  browserReport,
  browserScenario,
  closeBrowsers,
  type BrowserResult,
} from "./browser";
import { contentionReport, contentionScenario, type ContentionResult } from "./contention";
import {
  COLD_START_DEFAULTS,
  COLD_START_QUICK,
  coldStartReport,
  coldStartScenario,
  type ColdStartResult,
} from "./cold-start";
import { fanoutReport, fanoutScenario, type FanoutLoad, type FanoutResult } from "./fanout";
import {
  GROWTH_DEFAULTS,
  GROWTH_QUICK,
  growthReport,
  growthScenario,
  type GrowthResult,
} from "./growth";
import type { CpuShare, Summary } from "./load";
import {
  decisionScenario,
  pauseScenario,
  wakeScenario,
  warmUp,
  type DecisionResult,
  type PauseLoad,
  type PauseResult,
  type WakeResult,
} from "./scenarios";
import {
  INSIGHTS_DEFAULTS,
  INSIGHTS_QUICK,
  insightsReport,
  insightsScenario,
  type InsightsBenchResult,
} from "./insights";
import {
  BACKTEST_DEFAULTS,
  BACKTEST_QUICK,
  backtestReport,
  backtestScenario,
  type BacktestBenchResult,
} from "./backtest";
import { removeCpuCaps } from "./cgroup";
import { sqldScenario, type SqldResult } from "./sqld";
import {
  GATEWAY_DEFAULTS,
  GATEWAY_QUICK,
  gatewayReport,
  gatewayScenario,
  type GatewayResult,
} from "./gateway";
import { startCountersign, startFloor, stopAllChildren, type Target } from "./targets";
import { writesReport, writesScenario, type WriteResult } from "./writes";
import { SERVER_ENTRY } from "../support/server";

// `npm run bench [-- --quick] [--only=floor|countersign] [--scenarios=pause,decide,wake,writes,sqld,fanout,contention,growth,insights,backtest,coldstart,browser,gateway] [--profile[=DIR]] [--cap=CORES]`
//
// Measures Countersign against a bare node:http + libSQL "floor" doing the same work shape, with
// the same load generator (each scenario on the floor, then on Countersign), and prints a markdown
// table (progress goes to stderr, the report to stdout). Everything it starts it stops, on
// success, error or Ctrl-C. `--profile` runs the Countersign server under `node --cpu-prof`
// (summarize with test/bench/profile-summary.ts); FLOOR_SYNCHRONOUS=NORMAL in the environment
// runs the floor without an fsync per commit (an experiment, not the comparison). The browser
// scenario (test/bench/browser.ts: the queue page in Chromium, Countersign only) runs when
// --scenarios names it, and so do fanout (test/bench/fanout.ts: thousands of streams, memory per
// idle stream) and contention (test/bench/contention.ts: many reviewers racing on the same calls);
// growth (test/bench/growth.ts: a database with 1M events and 100k decided batches against an
// empty one) and coldstart (test/bench/cold-start.ts: spawn → healthy) start their own servers;
// insights (test/bench/insights.ts) times the insights page's reads on growth's grown database;
// backtest (test/bench/backtest.ts) the policy backtest and suggestions on it, and pauses meanwhile.
// writes (test/bench/writes.ts) measures CPU per pause and per decision one at a time, and the
// pauses/s and decisions/s a closed loop of clients sustains; sqld (test/bench/sqld.ts) measures
// the same over a libSQL server it starts (one and two app instances, database round trips per
// request, then 1, 2 and 4 instances each capped by a cgroup to --cap cores, 0.25 by default),
// and also runs writes on the floor and the embedded app, to print them beside it.
// gateway (test/bench/gateway.ts) measures what the MCP gateway adds to a tools/call (direct, a
// proxy-only floor, allowed, denied; 16 sessions for calls/s), embedded and over sqld.
// The default is pause,decide,wake,writes,gateway: a plain `npm run bench` takes about 9 minutes.

const args = process.argv.slice(2);
const flag = (name: string) => args.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
const quick = flag("quick") !== undefined;
/** `--cap=CORES`: the CPU cap of each app instance in the sqld scenario's scale-out runs */
const capCores = Number(flag("cap")?.split("=")[1] ?? 0.25);
if (!(capCores > 0 && capCores <= 4)) throw new Error("--cap takes a number of cores, e.g. 0.25");
const only = flag("only")?.split("=")[1]?.toLowerCase();
const profileFlag = flag("profile");
const profileDir =
  profileFlag === undefined
    ? undefined
    : profileFlag.split("=")[1] || join(tmpdir(), `countersign-bench-profile-${Date.now()}`);
if (only && only !== "floor" && only !== "countersign")
  throw new Error("--only takes floor or countersign");
/**
 * Every scenario and its share of the run's time limit (ms, full run / --quick). A new scenario
 * is a name here, a runner in main() and a section in the report.
 */
const SCENARIO_BUDGET_MS = {
  pause: [150_000, 60_000],
  decide: [60_000, 25_000],
  wake: [60_000, 25_000],
  writes: [120_000, 45_000],
  // sqld and three app instances, plus writes on the floor and the embedded app when not asked for
  // … and then 1, 2 and 4 capped instances
  sqld: [540_000, 300_000],
  fanout: [600_000, 180_000],
  contention: [150_000, 75_000],
  // the first run seeds (and caches) the big database: about 1–3 minutes more
  growth: [720_000, 540_000],
  // reads only, in this process, on a copy of growth's cached database (seeded first if missing)
  insights: [360_000, 240_000],
  // the policy backtest and suggestions over HTTP on the same database, and pauses meanwhile
  backtest: [420_000, 300_000],
  coldstart: [240_000, 150_000],
  browser: [270_000, 150_000],
  // the MCP gateway: its own server, embedded then over sqld, 16 sessions of two processes each
  gateway: [300_000, 180_000],
} as const;
type ScenarioName = keyof typeof SCENARIO_BUDGET_MS;
const SCENARIOS = Object.keys(SCENARIO_BUDGET_MS) as ScenarioName[];
const DEFAULT_SCENARIOS: ScenarioName[] = ["pause", "decide", "wake", "writes", "gateway"];
/** the scenarios with a floor to compare against (the browser one runs on Countersign only) */
const FLOOR_SCENARIOS: ScenarioName[] = [
  "pause",
  "decide",
  "wake",
  "writes",
  "sqld",
  "fanout",
  "contention",
];
const CLASSIC_SCENARIOS: ScenarioName[] = ["pause", "decide", "wake"];
const scenarios = new Set(flag("scenarios")?.split("=")[1]?.split(",") ?? DEFAULT_SCENARIOS);
for (const s of scenarios)
  if (!(SCENARIOS as string[]).includes(s))
    throw new Error(`--scenarios takes ${SCENARIOS.join(",")}`);
const floorScenarios = FLOOR_SCENARIOS.some((s) => scenarios.has(s));
/** the pause, decide and wake rows share one table */
const classicScenarios = CLASSIC_SCENARIOS.some((s) => scenarios.has(s));
/** sqld's figures are printed beside the floor's and the embedded app's, so it runs writes too */
const writeScenarios = scenarios.has("writes") || scenarios.has("sqld");
const browser = scenarios.has("browser") ? browserConfig(quick) : undefined;
/** the scenarios that run on a Countersign target this script starts (the others start their own) */
const needsTarget = floorScenarios || browser !== undefined;

const config = quick
  ? {
      loads: [
        { clients: 10, rate: 50 },
        { clients: 50, rate: 25 },
        { clients: 200, rate: 10 },
      ] as PauseLoad[],
      pauseTiming: { warmupMs: 500, durationMs: 2000 },
      decisions: {
        concurrency: 16,
        warmupMs: 500,
        durationMs: 2000,
        seed: { floor: 20_000, Countersign: 6_000 },
      },
      wake: { batches: 30, warmup: 5, rate: 20 },
      writes: {
        sequential: 200,
        clients: 16,
        warmupMs: 500,
        durationMs: 2000,
        seed: { floor: 6_000, Countersign: 3_000, sqld: 2_000 },
      },
      fanout: {
        loads: [
          { clients: 250, rate: 5 },
          { clients: 1000, rate: 5 },
        ] as FanoutLoad[],
        timing: { warmupMs: 2000, durationMs: 6000, deliveryTimeoutMs: 10_000 },
      },
      contention: {
        reviewers: 20,
        concurrency: 32,
        hotCalls: 2,
        warmupMs: 500,
        durationMs: 3000,
        seed: { floor: 4_000, Countersign: 1_000 },
      },
      warmUpMs: 1000,
    }
  : {
      loads: [
        { clients: 10, rate: 200 },
        { clients: 100, rate: 100 },
        { clients: 1000, rate: 20 },
      ] as PauseLoad[],
      pauseTiming: { warmupMs: 2000, durationMs: 10_000 },
      decisions: {
        concurrency: 48,
        warmupMs: 2000,
        durationMs: 10_000,
        seed: { floor: 100_000, Countersign: 20_000 },
      },
      wake: { batches: 200, warmup: 20, rate: 20 },
      writes: {
        sequential: 400,
        clients: 16,
        warmupMs: 2000,
        durationMs: 10_000,
        seed: { floor: 30_000, Countersign: 15_000, sqld: 10_000 },
      },
      fanout: {
        loads: [
          { clients: 1000, rate: 5 },
          { clients: 5000, rate: 5 },
        ] as FanoutLoad[],
        timing: { warmupMs: 4000, durationMs: 20_000, deliveryTimeoutMs: 15_000 },
      },
      contention: {
        reviewers: 50,
        concurrency: 64,
        hotCalls: 4,
        warmupMs: 2000,
        durationMs: 10_000,
        seed: { floor: 10_000, Countersign: 3_000 },
      },
      warmUpMs: 3000,
    };

type Results = {
  pauses: PauseResult[];
  fanout: FanoutResult[];
  contention?: ContentionResult;
  decisions?: DecisionResult;
  wake?: WakeResult;
  writes?: WriteResult;
  browser?: BrowserResult;
};
/** the scenarios that start their own servers */
const standalone: {
  growth?: GrowthResult;
  insights?: InsightsBenchResult;
  backtest?: BacktestBenchResult;
  coldStart?: ColdStartResult;
  sqld?: SqldResult;
  gateway?: GatewayResult;
} = {};

/* ------------------------------------------------------------------ lifecycle */

let cleaningUp: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaningUp ??= closeBrowsers()
    .finally(() => stopAllChildren())
    .finally(() => removeCpuCaps())
    .finally(() => closeDb());
  return cleaningUp;
}
function abort(reason: string, code: number) {
  console.error(`\nbench: ${reason}; stopping the servers…`);
  void cleanup().finally(() => process.exit(code));
}
process.once("SIGINT", () => abort("interrupted", 130));
process.once("SIGTERM", () => abort("terminated", 143));
// start-up and warm-up, then each scenario's own budget
const timeLimitMs = [...scenarios].reduce(
  (sum, s) => sum + SCENARIO_BUDGET_MS[s as ScenarioName][quick ? 1 : 0],
  quick ? 40_000 : 60_000,
);
setTimeout(() => abort(`over the time limit (${timeLimitMs / 1000} s)`, 2), timeLimitMs).unref();

// The Next.js build and the server that serves it (lib/http/server.ts), both from `npm run build`.
const hasBuild = () =>
  existsSync(join(process.cwd(), ".next", "BUILD_ID")) &&
  existsSync(join(process.cwd(), SERVER_ENTRY));

/** Builds the app when there is no production build; waits out a build another process runs. */
async function ensureBuild() {
  if (hasBuild()) return;
  console.error(
    "bench: no production build (.next/BUILD_ID, dist/server.js); running `npm run build`…",
  );
  const built = spawnSync("npm", ["run", "build"], {
    stdio: ["ignore", process.stderr, process.stderr],
  });
  if (built.status === 0 && hasBuild()) return;
  console.error(
    "bench: that build failed (another may be running); waiting up to 2 min for .next/BUILD_ID…",
  );
  const deadline = Date.now() + 120_000;
  while (!hasBuild()) {
    if (Date.now() > deadline) throw new Error("No production build: `npm run build` failed.");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/* ------------------------------------------------------------------ the report */

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const pair = (s: Summary | undefined) => (s ? `${ms(s.p50)} / ${ms(s.p99)} ms` : "–");
const times = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || !Number.isFinite(a / b) ? "–" : `${(a / b).toFixed(1)}×`;
const ratioPair = (a: Summary | undefined, b: Summary | undefined) =>
  a && b ? `${times(a.p50, b.p50)} / ${times(a.p99, b.p99)}` : "–";
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const cpuShare = (c: CpuShare) =>
  Number.isNaN(c.oursPct) ? "–" : `${c.oursPct.toFixed(0)}% / ${c.otherPct.toFixed(0)}%`;
/** server CPU ms per operation */
const perOp = (c: CpuShare, ops: number) =>
  Number.isNaN(c.serverMs) || ops === 0 ? "–" : `${(c.serverMs / ops).toFixed(2)} ms`;
const total = (s: Record<string, number>) => Object.values(s).reduce((a, b) => a + b, 0);
const statuses = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k}×${int(v)}`)
    .join(", ");

function machineLine(): string {
  const cpu = cpus();
  return `- Machine: ${cpu.length} × ${cpu[0]?.model.trim() ?? "unknown CPU"}, ${platform()} ${release()}, Node ${process.version}; load average at the end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}.`;
}

const commandLine = (startedAt: number) =>
  `- Command: \`npm run bench${args.length ? ` -- ${args.join(" ")}` : ""}\` (\`tsx test/bench/run.ts${args.length ? ` ${args.join(" ")}` : ""}\`), ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all.`;

function report(cs: Results | undefined, floor: Results | undefined, startedAt: number) {
  const lines = floorScenarios ? floorReport(cs, floor, startedAt) : [];
  if (cs?.browser) {
    if (lines.length) lines.push("");
    const context = floorScenarios ? [] : [machineLine(), commandLine(startedAt)];
    lines.push(...browserReport(cs.browser, quick, context));
  }
  for (const section of [
    standalone.growth && growthReport(standalone.growth),
    standalone.insights && insightsReport(standalone.insights),
    standalone.backtest && backtestReport(standalone.backtest),
    standalone.coldStart && coldStartReport(standalone.coldStart),
    standalone.gateway && gatewayReport(standalone.gateway),
  ]) {
    if (!section) continue;
    if (lines.length) lines.push("");
    lines.push(...section);
  }
  if (!floorScenarios && !cs?.browser) lines.push("", machineLine(), commandLine(startedAt));
  return lines.join("\n");
}

function floorReport(
  cs: Results | undefined,
  floor: Results | undefined,
  startedAt: number,
): string[] {
  const lines: string[] = [
    `## Countersign vs floor${quick ? " (--quick: small loads, short runs; not the real numbers)" : ""}`,
    "",
  ];
  if (classicScenarios) lines.push(...classicReport(cs, floor), "");
  if (writeScenarios)
    lines.push(
      ...writesReport(
        { floor: floor?.writes, embedded: cs?.writes, sqld: standalone.sqld },
        config.writes,
      ),
      "",
    );
  if (scenarios.has("fanout"))
    lines.push(
      "### Fan-out",
      "",
      ...fanoutReport(config.fanout.loads, cs?.fanout, floor?.fanout),
      "",
    );
  if (scenarios.has("contention"))
    lines.push("### Contention", "", ...contentionReport(cs?.contention, floor?.contention), "");
  const cpu = cpus();
  lines.push(
    machineLine(),
    `- The load generator, the server under test and this script share those ${cpu.length} cores; both servers run side by side on 127.0.0.1, each over a fresh database file, and every scenario runs on the floor and then on Countersign (the idle one costs next to nothing).`,
    '- "CPU bench / other": share of the whole machine (100% = all cores) used during the measured window by the bench\'s own processes (generators + server) and by everything else. A large "other" means the machine was busy and the numbers are pessimistic. "server CPU / op": CPU time of the server process in the window divided by the requests (a pause includes its fan-out to every stream; a wake-up op is a decision plus the answered long-poll).',
    commandLine(startedAt),
    "- Floor (test/bench/floor-server.ts): bare node:http + @libsql/client, WAL, writes queued in-process as BEGIN IMMEDIATE transactions; a pause is one INSERT + one SSE write per client (the message encoded once), a decision one `UPDATE … WHERE status = 'pending' AND revision = ? RETURNING` + one event INSERT, a long-poll is woken in-process by the decision.",
  );
  if (profileDir) lines.push(`- CPU profiles of the Countersign server: ${profileDir}`);
  return lines;
}

/** The pause, decision and wake-up rows, and their details. */
function classicReport(cs: Results | undefined, floor: Results | undefined): string[] {
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`| ${cells.join(" | ")} |`);
  const verdict = (met: boolean | undefined) =>
    met === undefined ? "" : met ? " — met" : " — **missed**";

  row(["measurement", "load", "Countersign", "floor", "Countersign / floor", "goal"]);
  row(["---", "---", "---:", "---:", "---:", "---"]);
  config.loads.forEach((load, i) => {
    const c = cs?.pauses[i];
    const f = floor?.pauses[i];
    const met =
      c && f
        ? !c.skipped && c.latency.p50 <= 2 * f.latency.p50 && c.latency.p99 <= 2 * f.latency.p99
        : undefined;
    const cell = (p: PauseResult | undefined) =>
      p?.skipped
        ? `**overloaded**: ${int(p.answeredPerSecond)} of ${p.rate} pauses/s answered; ${pair(p.latency)} at saturation`
        : pair(p?.latency);
    row([
      "pause → `batch.created` on every stream, p50 / p99",
      `${int(load.clients)} clients, ${load.rate} pauses/s`,
      cell(c),
      cell(f),
      ratioPair(c?.latency, f?.latency),
      `within 2× floor${verdict(met)}`,
    ]);
  });
  const cd = cs?.decisions;
  const fd = floor?.decisions;
  row([
    "decisions/s (approve with expectedRevision, 200s only)",
    `${config.decisions.concurrency} keep-alive deciders`,
    cd ? `${int(cd.perSecond)}/s` : "–",
    fd ? `${int(fd.perSecond)}/s` : "–",
    times(cd?.perSecond, fd?.perSecond),
    `≥ 1,000/s${verdict(cd ? cd.perSecond >= 1000 : undefined)}`,
  ]);
  row([
    "decision latency, p50 / p99",
    `${config.decisions.concurrency} keep-alive deciders`,
    pair(cd?.latency),
    pair(fd?.latency),
    ratioPair(cd?.latency, fd?.latency),
    "",
  ]);
  row([
    "server CPU per decision (CPU-time, robust to a busy machine)",
    `${config.decisions.concurrency} keep-alive deciders`,
    cd ? perOp(cd.cpu, total(cd.statuses)) : "–",
    fd ? perOp(fd.cpu, total(fd.statuses)) : "–",
    cd && fd
      ? times(cd.cpu.serverMs / total(cd.statuses), fd.cpu.serverMs / total(fd.statuses))
      : "–",
    "",
  ]);
  row([
    "decision → parked `GET /batches/{id}?wait=30` answers, p50 / p99",
    `${config.wake.batches + config.wake.warmup} parked, ${config.wake.rate} decisions/s`,
    pair(cs?.wake?.latency),
    pair(floor?.wake?.latency),
    ratioPair(cs?.wake?.latency, floor?.wake?.latency),
    `p99 ≤ 15 ms${verdict(cs?.wake ? cs.wake.latency.p99 <= 15 : undefined)}`,
  ]);

  lines.push("", "### Details", "");
  row([
    "target",
    "scenario",
    "samples",
    "delivered / expected",
    "HTTP statuses",
    "request p50 / p99",
    "max",
    "pacer late p99",
    "CPU bench / other",
    "server CPU / op",
  ]);
  row(["---", "---", "---:", "---:", "---", "---:", "---:", "---:", "---:", "---:"]);
  for (const [name, r] of [
    ["Countersign", cs],
    ["floor", floor],
  ] as const) {
    if (!r) continue;
    for (const p of r.pauses) {
      row([
        name,
        `pause, ${p.clients} clients × ${p.rate}/s (${(p.measuredMs / 1000).toFixed(1)} s${p.skipped ? `, overloaded: ${int(p.skipped)} sends skipped` : ""}; ${int(p.answeredPerSecond)}/s answered)`,
        int(p.latency.n),
        `${int(p.delivered)} / ${int(p.expected)}`,
        statuses(p.pauseStatuses),
        pair(p.pauseHttp),
        `${ms(p.latency.max)} ms`,
        `${ms(p.lateness.p99)} ms`,
        cpuShare(p.cpu),
        perOp(p.cpu, p.pauseHttp.n),
      ]);
    }
    const d = r.decisions;
    if (d)
      row([
        name,
        `decisions, ${d.concurrency} deciders (${(d.measuredMs / 1000).toFixed(1)} s${d.exhausted ? ", ran out of seeded calls" : ""})`,
        int(d.latency.n),
        `${int(d.seeded)} seeded`,
        statuses(d.statuses),
        pair(d.latency),
        `${ms(d.latency.max)} ms`,
        "",
        cpuShare(d.cpu),
        perOp(d.cpu, total(d.statuses)),
      ]);
    const w = r.wake;
    if (w)
      row([
        name,
        `wake-up, ${w.parked} parked at ${w.rate}/s`,
        int(w.latency.n),
        `${w.failures} failed`,
        statuses(w.statuses),
        pair(w.decisionHttp),
        `${ms(w.latency.max)} ms`,
        "",
        cpuShare(w.cpu),
        perOp(w.cpu, w.parked),
      ]);
  }

  lines.push(
    "",
    '- Pause latency: from writing `POST /api/v1/runs` (a run with a one-call batch, open-loop at the fixed rate) to each stream client (`GET /api/v1/stream`, raw node:http, one reviewer token) parsing the matching `batch.created`; one sample per client per pause. Warm-up pauses are not counted. "pacer late" is how far behind schedule the generator fired (a generator saturation check). When a server falls more than 1 s of pauses behind, the generator skips sends until it catches up and the row says **overloaded**, with the rate actually answered; its latencies are then those of a saturated server with a ~1 s queue.',
  );
  return lines;
}

/** Starts Countersign; a build replaced under us (another engineer rebuilding) gets one retry. */
async function startCountersignOnce(): Promise<Target> {
  await ensureBuild();
  try {
    return await startCountersign({ profileDir });
  } catch (error) {
    console.error(
      `bench: Countersign did not start (${String(error).split("\n")[0]}); retrying once…`,
    );
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await ensureBuild();
    return startCountersign({ profileDir });
  }
}

/**
 * Both servers run side by side (the idle one costs next to nothing) and each scenario is run on
 * the floor and then on Countersign, so a machine that gets busier during the run weighs on both.
 */
async function main(): Promise<number> {
  const startedAt = Date.now();
  if (only !== "floor") await ensureBuild();
  console.error(`bench: ${quick ? "quick" : "full"} run${only ? `, ${only} only` : ""}`);
  const failures: string[] = [];
  const results = new Map<Target["name"], Results>();
  const live: Target[] = [];
  const start = async (name: Target["name"], starter: () => Promise<Target>) => {
    try {
      const target = await starter();
      console.error(`bench: ${name} listening on port ${target.endpoint.port}, pid ${target.pid}`);
      live.push(target);
      results.set(name, { pauses: [], fanout: [] });
    } catch (error) {
      console.error(error);
      failures.push(`${name} did not start: ${String(error).split("\n")[0]}`);
    }
  };
  const standaloneScenario = async (name: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      console.error(error);
      failures.push(`Countersign, ${name}: ${String(error).split("\n")[0]}`);
    }
  };
  if (only !== "countersign" && floorScenarios) await start("floor", startFloor);
  if (only !== "floor" && needsTarget) await start("Countersign", startCountersignOnce);

  const each = async (scenario: string, work: (target: Target, r: Results) => Promise<void>) => {
    for (const target of [...live]) {
      try {
        await work(target, results.get(target.name)!);
      } catch (error) {
        console.error(error);
        failures.push(`${target.name}, ${scenario}: ${String(error).split("\n")[0]}`);
        live.splice(live.indexOf(target), 1);
        await target.stop();
      }
    }
  };
  try {
    await each("warm-up", (t) => warmUp(t, config.warmUpMs));
    if (scenarios.has("pause")) {
      for (const load of config.loads) {
        await each(`pause ${load.clients}×${load.rate}`, async (t, r) => {
          r.pauses.push(await pauseScenario(t, load, config.pauseTiming));
        });
      }
    }
    if (scenarios.has("decide")) {
      await each("decisions", async (t, r) => {
        r.decisions = await decisionScenario(t, {
          ...config.decisions,
          seed: config.decisions.seed[t.name],
        });
      });
    }
    if (scenarios.has("wake")) {
      await each("wake-up", async (t, r) => {
        r.wake = await wakeScenario(t, config.wake);
      });
    }
    if (writeScenarios) {
      await each("writes", async (t, r) => {
        r.writes = await writesScenario(t, { ...config.writes, seed: config.writes.seed[t.name] });
      });
    }
    if (scenarios.has("fanout")) {
      for (const load of config.fanout.loads) {
        await each(`fan-out ${load.clients}×${load.rate}`, async (t, r) => {
          r.fanout.push(await fanoutScenario(t, load, config.fanout.timing));
        });
      }
    }
    if (scenarios.has("contention")) {
      await each("contention", async (t, r) => {
        r.contention = await contentionScenario(t, {
          ...config.contention,
          seed: config.contention.seed[t.name],
        });
      });
    }
    if (browser) {
      const target = live.find((t) => t.name === "Countersign");
      if (!target) failures.push("browser: it runs on Countersign only, which did not run");
      else {
        try {
          results.get("Countersign")!.browser = await browserScenario(target, browser, {
            profileDir,
          });
        } catch (error) {
          console.error(error);
          failures.push(`Countersign, browser: ${String(error).split("\n")[0]}`);
        }
      }
    }
  } finally {
    for (const target of live) await target.stop();
  }
  // Countersign only, each over its own servers, after the others so they do not share the cores
  if (only !== "floor") {
    if (scenarios.has("sqld"))
      await standaloneScenario("sqld", async () => {
        standalone.sqld = await sqldScenario({
          ...config.writes,
          seed: config.writes.seed.sqld,
          warmUpMs: config.warmUpMs,
          idleMs: 3000,
          capCores,
        });
      });
    if (scenarios.has("gateway"))
      await standaloneScenario("gateway", async () => {
        standalone.gateway = await gatewayScenario(
          quick ? GATEWAY_QUICK : GATEWAY_DEFAULTS,
          undefined,
          profileDir,
        );
      });
    if (scenarios.has("growth"))
      await standaloneScenario("growth", async () => {
        standalone.growth = await growthScenario(quick ? GROWTH_QUICK : GROWTH_DEFAULTS);
      });
    if (scenarios.has("insights"))
      await standaloneScenario("insights", async () => {
        standalone.insights = await insightsScenario(quick ? INSIGHTS_QUICK : INSIGHTS_DEFAULTS);
      });
    if (scenarios.has("backtest"))
      await standaloneScenario("backtest", async () => {
        standalone.backtest = await backtestScenario(quick ? BACKTEST_QUICK : BACKTEST_DEFAULTS);
      });
    if (scenarios.has("coldstart"))
      await standaloneScenario("cold start", async () => {
        standalone.coldStart = await coldStartScenario(
          quick ? COLD_START_QUICK : COLD_START_DEFAULTS,
        );
      });
  }
  console.log(report(results.get("Countersign"), results.get("floor"), startedAt));
  for (const failure of failures) console.log(`- **Failed**: ${failure}`);
  return failures.length === 0 ? 0 : 1;
}

main()
  .then(async (code) => {
    await cleanup();
    process.exit(code);
  })
  .catch((error) => {
    console.error(error);
    void cleanup().finally(() => process.exit(1));
  });
