import http from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { createClient, type Client } from "@libsql/client";
import { startServer, type TestServer } from "../support/server";
import { freePortInRange } from "./cold-start";
import { copyForRun, seededDatabases, type GrowthActors, type SeedPlan } from "./growth-seed";
import {
  cpuMeter,
  keepAliveAgent,
  now,
  parseJson,
  request,
  summarize,
  waitIdle,
  type Endpoint,
  type Summary,
} from "./load";
import { pauseBody, type RunResponse } from "./targets";

// `npx tsx test/bench/growth.ts [--quick]` (or `npm run bench -- --scenarios=growth`): does
// Countersign cost the same with a big history? Two servers, one over the "empty" database (the
// team and 100 pending cards) and one over the "grown" one (the same, plus 100,000 decided
// batches and 1,000,000 events: see growth-seed.ts), are driven by the same requests one at a
// time, alternating between them, so a busy machine slows both alike. The report gives each
// operation's p50 / p99 on both and the ratio; the goal is grown within 1.5× of empty.

export type GrowthOptions = SeedPlan & {
  /** samples per operation and server (stream replays take a third of this) */
  samples: number;
};

export const GROWTH_DEFAULTS: GrowthOptions = {
  events: 1_000_000,
  decidedBatches: 100_000,
  pending: 100,
  samples: 200,
};
const START_RESTARTS = 3;
export const GROWTH_QUICK: GrowthOptions = { ...GROWTH_DEFAULTS, samples: 60 };

export type GrowthRow = {
  operation: string;
  request: string;
  empty: Summary;
  grown: Summary;
  /** server CPU time per request, ms (NaN where /proc is missing) */
  cpuEmpty: number;
  cpuGrown: number;
};

export type GrowthResult = {
  options: GrowthOptions;
  seed: { seconds: number; cached: boolean; events: number; batches: number; bytes: number };
  /** spawn → /api/health 200 over each database (every start: the first and the restarts) */
  startMs: { empty: Summary; grown: Summary };
  rows: GrowthRow[];
  loadAverage: { start: number[]; end: number[] };
  seconds: number;
};

const log = (message: string) => console.error(message);

/* ------------------------------------------------------------------ the two servers */

type Side = {
  label: "empty" | "grown";
  server: TestServer;
  endpoint: Endpoint;
  /** the server's database file, read directly for the seqs a replay must reach */
  file: Client;
  dir: string;
  databaseUrl: string;
  /** spawn → /api/health 200, each time a server was started over this side's file */
  startMs: number[];
};

// Every server this module starts and every database copy (most of a gigabyte each), so that
// an exit of any kind (process.exit from a signal handler included) leaves neither behind.
const running = new Set<TestServer>();
const copies = new Set<string>();
process.once("exit", () => {
  for (const server of running) server.process.kill("SIGKILL");
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

async function bootServer(databaseUrl: string) {
  const startedAt = now();
  const server = await startServer({
    databaseUrl,
    env: { COUNTERSIGN_QUIET: "1" },
    port: await freePortInRange(),
  });
  running.add(server);
  return { server, ms: now() - startedAt };
}

async function startSide(label: Side["label"], seedFile: string, seededAt: number): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), `countersign-bench-growth-${label}-`));
  copies.add(dir);
  try {
    const databaseUrl = await copyForRun(seedFile, dir, seededAt);
    const { server, ms } = await bootServer(databaseUrl);
    const endpoint = { host: "127.0.0.1", port: server.port };
    const file = createClient({ url: databaseUrl });
    return { label, server, endpoint, file, dir, databaseUrl, startMs: [ms] };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    copies.delete(dir);
    throw error;
  }
}

/** Stops the side's server and starts a new one over the same file, timing the start. */
async function restartSide(side: Side) {
  await side.server.stop();
  running.delete(side.server);
  const { server, ms } = await bootServer(side.databaseUrl);
  side.server = server;
  side.endpoint = { host: "127.0.0.1", port: server.port };
  side.startMs.push(ms);
}

async function stopSide(side: Side) {
  side.file.close();
  await side.server.stop();
  running.delete(side.server);
  rmSync(side.dir, { recursive: true, force: true });
  copies.delete(side.dir);
}

/* ------------------------------------------------------------------ measuring */

type Sample = { ms: number; ok: boolean; detail?: string };
type Probe = (side: Side, i: number) => Promise<Sample>;

/**
 * `n` samples of `probe` on each side, alternating (empty, grown, empty, …) after a few
 * unmeasured rounds, with each server's CPU time over the run.
 */
async function compare(
  sides: [Side, Side],
  operation: string,
  requestLine: string,
  n: number,
  probe: Probe,
): Promise<GrowthRow> {
  log(`growth: ${operation} (${requestLine}), ${n} samples each…`);
  const warm = Math.min(10, Math.ceil(n / 10));
  for (let i = 0; i < warm; i++) for (const side of sides) await probe(side, -1 - i);
  const samples: [number[], number[]] = [[], []];
  const meters = sides.map((side) => cpuMeter(side.server.process.pid));
  for (let i = 0; i < n; i++) {
    for (const [s, side] of sides.entries()) {
      const sample = await probe(side, i);
      if (!sample.ok)
        throw new Error(`${operation} on the ${side.label} database failed: ${sample.detail}`);
      samples[s]!.push(sample.ms);
    }
  }
  const cpu = meters.map((meter) => meter().serverMs / n);
  for (const side of sides) await waitIdle(side.server.process.pid, 5000);
  return {
    operation,
    request: requestLine,
    empty: summarize(samples[0]),
    grown: summarize(samples[1]),
    cpuEmpty: cpu[0]!,
    cpuGrown: cpu[1]!,
  };
}

const agents = new WeakMap<Side, http.Agent>();
const agentOf = (side: Side) => {
  let agent = agents.get(side);
  if (!agent) agents.set(side, (agent = keepAliveAgent(4)));
  return agent;
};

function get(side: Side, path: string, token: string): Promise<Sample> {
  return request(side.endpoint, agentOf(side), { method: "GET", path, token }).then((r) => ({
    ms: r.doneAt - r.sentAt,
    ok: r.status === 200,
    detail: `HTTP ${r.status} ${r.error ?? r.text.slice(0, 200)}`,
  }));
}

/**
 * Opens an SSE stream with `Last-Event-ID: from` and times it to the message with id `until`
 * (the last event the replay must send), then hangs up.
 */
function replay(side: Side, path: string, token: string, from: number, until: number) {
  return new Promise<Sample & { messages: number }>((resolve) => {
    const sentAt = now();
    let messages = 0;
    let buffer = "";
    const finish = (ok: boolean, detail?: string) => {
      clearTimeout(timer);
      req.destroy();
      resolve({ ms: now() - sentAt, ok, detail, messages });
    };
    const timer = setTimeout(() => finish(false, `no event ${until} within 10 s`), 10_000);
    const req = http.request(
      {
        ...side.endpoint,
        path,
        agent: false,
        headers: {
          accept: "text/event-stream",
          authorization: `Bearer ${token}`,
          "last-event-id": String(from),
        },
      },
      (res) => {
        if (res.statusCode !== 200) return finish(false, `HTTP ${res.statusCode}`);
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const id = /^id: (\d+)$/m.exec(block);
            if (!id) continue;
            messages++;
            if (Number(id[1]) >= until) return finish(true);
          }
        });
        res.on("error", () => undefined);
      },
    );
    req.on("error", (error) => finish(false, error.message));
    req.end();
  });
}

/** The same pause, sent to `queue` (the bench agent may target both of the reviewer's queues). */
function inQueue(body: ReturnType<typeof pauseBody>, queue: string) {
  return { ...body, batch: { ...body.batch, queue } };
}

const scalar = async (client: Client, sql: string, args: (string | number)[] = []) =>
  Number((await client.execute({ sql, args })).rows[0]?.[0] ?? 0);

/* ------------------------------------------------------------------ the scenario */

export async function growthScenario(
  options: GrowthOptions = GROWTH_DEFAULTS,
): Promise<GrowthResult> {
  const startedAt = Date.now();
  const loadStart = loadavg();
  const { events, decidedBatches, pending } = options;
  const seeded = await seededDatabases({ events, decidedBatches, pending });
  const actors: GrowthActors = seeded.actors;
  const sides: Side[] = [];
  try {
    for (const label of ["empty", "grown"] as const) {
      log(`growth: starting Countersign over the ${label} database…`);
      sides.push(await startSide(label, seeded[label], seeded.seededAt));
    }
    const pair = sides as [Side, Side];
    // Start-up is timed over restarts, alternating: the first start of the grown side follows
    // the copy of its file, and a single start on a busy machine says little.
    log(`growth: start-up, ${START_RESTARTS} restarts of each…`);
    for (let r = 0; r < START_RESTARTS; r++) for (const side of pair) await restartSide(side);
    const startMs = { empty: summarize(pair[0].startMs), grown: summarize(pair[1].startMs) };
    const rows = await measureAll(pair, actors, options.samples);
    return {
      options,
      seed: {
        seconds: seeded.seedSeconds,
        cached: seeded.cached,
        ...seeded.grownCounts,
      },
      startMs,
      rows,
      loadAverage: { start: loadStart, end: loadavg() },
      seconds: (Date.now() - startedAt) / 1000,
    };
  } finally {
    for (const side of sides) agents.get(side)?.destroy();
    await Promise.all(sides.map(stopSide));
  }
}

async function measureAll(sides: [Side, Side], actors: GrowthActors, n: number) {
  const { agentKey, reviewerToken } = actors;
  const rows: GrowthRow[] = [];
  // Pauses leave pending calls; the decision probe approves them, so the working set is back to
  // its 100 cards before the listings are measured. They alternate between the reviewer's two
  // queues, so that each queue's history has full pages on the empty database too.
  const toDecide = new Map<Side, { id: string; revision: number; runId: string }[]>(
    sides.map((s) => [s, []]),
  );
  rows.push(
    await compare(sides, "pause", "POST /api/v1/runs (one call)", n, async (side, i) => {
      const r = await request(side.endpoint, agentOf(side), {
        method: "POST",
        path: "/api/v1/runs",
        token: agentKey,
        body: inQueue(
          pauseBody(`growth-${side.label}-${i}-${Date.now().toString(36)}`),
          actors.reviewerQueueIds[Math.abs(i) % 2]!,
        ),
      });
      if (r.status === 201) {
        const run = parseJson<RunResponse>(r, "a pause");
        const call = run.batches[0]!.calls[0]!;
        toDecide.get(side)!.push({ id: call.id, revision: call.revision, runId: run.id });
      }
      return { ms: r.doneAt - r.sentAt, ok: r.status === 201, detail: r.text.slice(0, 200) };
    }),
  );
  const decided = new Map<Side, string[]>(sides.map((s) => [s, []]));
  rows.push(
    await compare(
      sides,
      "decide",
      "POST /api/v1/calls/{id}/decision (approve, expectedRevision)",
      n,
      async (side) => {
        const call = toDecide.get(side)!.shift();
        if (!call) return { ms: 0, ok: false, detail: "no pending call left to decide" };
        decided.get(side)!.push(call.runId);
        const r = await request(side.endpoint, agentOf(side), {
          method: "POST",
          path: `/api/v1/calls/${call.id}/decision`,
          token: reviewerToken,
          body: { outcome: "approve", expectedRevision: call.revision },
        });
        return { ms: r.doneAt - r.sentAt, ok: r.status === 200, detail: r.text.slice(0, 200) };
      },
    ),
  );
  // the warm-up rounds' pauses are still pending: settle them outside the measurements
  for (const side of sides) {
    for (const call of toDecide.get(side)!.splice(0)) {
      await request(side.endpoint, agentOf(side), {
        method: "POST",
        path: `/api/v1/calls/${call.id}/decision`,
        token: reviewerToken,
        body: { outcome: "approve", expectedRevision: call.revision },
      });
    }
    const pending = await scalar(
      side.file,
      "SELECT count(*) FROM batches WHERE status = 'pending'",
    );
    log(`growth:   ${side.label}: ${pending} pending batches for the listings`);
  }

  const listings: [string, string, string][] = [
    ["queue listing", "GET /api/v1/queue (pending, first page of 50)", "/api/v1/queue"],
    [
      "queue listing",
      "GET /api/v1/queue?status=decided&limit=200 (the queue page's recent decisions)",
      "/api/v1/queue?status=decided&limit=200",
    ],
    [
      "queue snapshot",
      "GET /api/v1/queue/snapshot?limit=100 (the queue page's first screen)",
      "/api/v1/queue/snapshot?limit=100",
    ],
    ["history", "GET /api/v1/history (first page of 50)", "/api/v1/history"],
    [
      "history, filtered",
      "GET /api/v1/history?tool=refund_order&outcome=approved",
      "/api/v1/history?tool=refund_order&outcome=approved",
    ],
    [
      "history, filtered on a rare tool",
      `GET /api/v1/history?tool=${actors.filterTool} (a tool one of the two queues never saw: its whole history is walked)`,
      `/api/v1/history?tool=${actors.filterTool}`,
    ],
    [
      "history, one queue",
      "GET /api/v1/history?queue=<the second queue>",
      `/api/v1/history?queue=${actors.reviewerQueueIds[1]}`,
    ],
  ];
  for (const [operation, line, path] of listings)
    rows.push(await compare(sides, operation, line, n, (side) => get(side, path, reviewerToken)));

  // Replays: the newest events (the pauses and decisions above, the same on both sides) after a
  // Last-Event-ID a few hundred events back, on a log of a few thousand or of a million rows.
  const BACK = 400;
  const queueTarget = new Map<Side, { from: number; until: number }>();
  const runTarget = new Map<Side, { runId: string; until: number }>();
  const queues = actors.reviewerQueueIds;
  for (const side of sides) {
    const until = await scalar(
      side.file,
      `SELECT max(seq) FROM events WHERE queue_id IN (${queues.map(() => "?").join(",")})`,
      queues,
    );
    queueTarget.set(side, { from: until - BACK, until });
    const runId = decided.get(side)!.at(-1)!;
    runTarget.set(side, {
      runId,
      until: await scalar(side.file, "SELECT max(seq) FROM events WHERE run_id = ?", [runId]),
    });
  }
  const replays = Math.max(20, Math.round(n / 3));
  rows.push(
    await compare(
      sides,
      "stream replay",
      `GET /api/v1/stream, Last-Event-ID ${BACK} events back → last replayed event`,
      replays,
      (side) => {
        const { from, until } = queueTarget.get(side)!;
        return replay(side, "/api/v1/stream", reviewerToken, from, until);
      },
    ),
  );
  rows.push(
    await compare(
      sides,
      "run stream replay",
      "GET /api/v1/runs/{id}/stream (agent), Last-Event-ID 0 → the run's last event",
      replays,
      (side) => {
        const { runId, until } = runTarget.get(side)!;
        return replay(side, `/api/v1/runs/${runId}/stream`, agentKey, 0, until);
      },
    ),
  );
  return rows;
}

/* ------------------------------------------------------------------ the report */

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "–");
const int = (x: number) => Math.round(x).toLocaleString("en-US");

/** Goal: the grown database's p50 within 1.5× of the empty one's. */
export const GROWTH_GOAL = 1.5;

export function growthReport(result: GrowthResult): string[] {
  const { options, seed } = result;
  const lines = [
    `## Growth: ${int(seed.events)} events and ${int(seed.batches)} batches vs an empty database`,
    "",
    `| operation | request | empty p50 / p99 | grown p50 / p99 | grown / empty (p50 / p99) | server CPU per request, empty / grown | goal: p50 ≤ ${GROWTH_GOAL}× |`,
    "| --- | --- | ---: | ---: | ---: | ---: | --- |",
  ];
  for (const row of result.rows) {
    const p50 = row.grown.p50 / row.empty.p50;
    lines.push(
      `| ${row.operation} | ${row.request} | ${ms(row.empty.p50)} / ${ms(row.empty.p99)} ms | ${ms(row.grown.p50)} / ${ms(row.grown.p99)} ms | ${ratio(row.grown.p50, row.empty.p50)} / ${ratio(row.grown.p99, row.empty.p99)} | ${ms(row.cpuEmpty)} / ${ms(row.cpuGrown)} ms | ${p50 <= GROWTH_GOAL ? "met" : "**missed**"} |`,
    );
  }
  lines.push(
    "",
    `- Databases: "empty" is a team (4 queues, 2 agents, 2 reviewers) with ${options.pending} pending cards; "grown" is the same plus ${int(options.decidedBatches)} decided batches (runs claimed, tool results reported, completed) over 90 days and ${int(options.events)} history events, spread over the 4 queues (the bench reviewer belongs to 2). Grown file: ${(seed.bytes / 1048576).toFixed(0)} MiB, ${int(seed.events)} events, ${int(seed.batches)} batches; ${seed.cached ? "reused from the cache (seeding took" : "seeded in"} ${seed.seconds.toFixed(0)} s${seed.cached ? ")" : ""}.`,
    `- Method: one request at a time, alternating between the two servers, ${options.samples} samples per request kind (${Math.max(20, Math.round(options.samples / 3))} per replay) after a few unmeasured rounds; server CPU from /proc. Start-up (spawn → /api/health 200, median / max of ${result.startMs.empty.n} starts): empty ${int(result.startMs.empty.p50)} / ${int(result.startMs.empty.max)} ms, grown ${int(result.startMs.grown.p50)} / ${int(result.startMs.grown.max)} ms.`,
    `- Load average: ${result.loadAverage.start.map((x) => x.toFixed(2)).join(" ")} at the start, ${result.loadAverage.end.map((x) => x.toFixed(2)).join(" ")} at the end; ${result.seconds.toFixed(0)} s in all.`,
  );
  return lines;
}

/* ------------------------------------------------------------------ standalone */

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes("--quick");
  const stop = (code: number) => () => {
    console.error("\ngrowth: stopping…");
    process.exit(code); // the exit handler above kills the servers
  };
  process.once("SIGINT", stop(130));
  process.once("SIGTERM", stop(143));
  growthScenario(quick ? GROWTH_QUICK : GROWTH_DEFAULTS)
    .then((result) => console.log(growthReport(result).join("\n")))
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}
