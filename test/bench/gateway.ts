import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createClient } from "@libsql/client";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { closeDb, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { policyRules } from "@/db/schema";
import { newId } from "@/lib/ids";
import {
  cpuMeter,
  now,
  summarize,
  threadMeter,
  waitIdle,
  type Summary,
  type ThreadTime,
} from "./load";
import { startSqld, type Sqld } from "./sqld-server";
import { startCountersign, type Target } from "./targets";

// `npm run bench -- --scenarios=gateway` (in the default set): what the MCP gateway
// (lib/mcp-gateway, issue 25 item 7; issue 28 item 5) adds to a tools/call. A fast upstream
// (test/mcp-gateway/faulty-server.mjs's `echo`) is called by the official MCP client over stdio:
//   - directly;
//   - through the floor (test/bench/gateway-floor.mjs: the package's Relay with a gate that
//     forwards every call without asking: the proxying alone);
//   - through countersign-mcp-gateway with a policy rule allowing `echo`, and one denying `hang`;
// one call at a time from one session (latency, and the CPU the Countersign server, the gateway
// process and sqld spend per call), then a closed loop of 16 sessions (16 gateway processes,
// each with its own upstream) for allowed calls/s. Once over the embedded database file, once
// over a libSQL server (sqld) the app reaches over WebSockets (a `ws://` URL, as `libsql://`).

export type GatewayBenchOptions = {
  /** calls timed one at a time, per path */
  sequential: number;
  /** concurrent MCP sessions for throughput */
  sessions: number;
  warmupMs: number;
  durationMs: number;
};

export const GATEWAY_DEFAULTS: GatewayBenchOptions = {
  sequential: 400,
  sessions: 16,
  warmupMs: 2000,
  durationMs: 10_000,
};
export const GATEWAY_QUICK: GatewayBenchOptions = {
  sequential: 150,
  sessions: 16,
  warmupMs: 1000,
  durationMs: 4000,
};

export type PathName = "direct" | "floor" | "allowed" | "denied";

export type PathRow = {
  path: PathName;
  latency: Summary;
  /** CPU ms per call: the Countersign server, the process in front of the upstream, sqld */
  serverMs: number;
  gatewayMs: number;
  sqldMs: number;
  /** how long, per call, the server's main thread was runnable but waiting for a CPU */
  serverWaitingMs: number;
};

export type GatewayThroughput = {
  path: "floor" | "allowed";
  sessions: number;
  perSecond: number;
  latency: Summary;
  serverMs: number;
  sqldMs: number;
  /** the server's main thread during the loop: running, waiting for a CPU, asleep (ms per s) */
  serverThread: ThreadTime;
};

export type GatewayDatabaseResult = {
  database: "embedded" | "sqld";
  rows: PathRow[];
  throughput: GatewayThroughput[];
};

/** What the disk allows: bare one-INSERT write batches on a WAL file like the app's. */
export type CommitFloor = { latency: Summary; perSecond: number };

export type GatewayResult = {
  options: GatewayBenchOptions;
  results: GatewayDatabaseResult[];
  commitFloor?: CommitFloor;
};

/**
 * Every governed call is one commit of the embedded database (fsync'd: SQLite's default
 * synchronous=FULL, as the app runs it), and commits go one at a time: this measures that floor on
 * the same disk, in the same temp directory as the app's database, one commit at a time and from
 * 16 writers sharing one connection (as the app's writes do).
 */
async function commitFloor(options: GatewayBenchOptions): Promise<CommitFloor> {
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-commit-"));
  const client = createClient({ url: `file:${join(dir, "floor.db")}` });
  try {
    await client.execute("PRAGMA journal_mode = WAL");
    await client.execute("create table t (id integer primary key, v text)");
    const insert = () =>
      client.batch([{ sql: "insert into t (v) values (?)", args: ["x".repeat(1000)] }], "write");
    for (let i = 0; i < 20; i++) await insert();
    const samples: number[] = [];
    for (let i = 0; i < options.sequential; i++) {
      const start = now();
      await insert();
      samples.push(now() - start);
    }
    let done = 0;
    const end = now() + Math.min(options.durationMs, 5000);
    await Promise.all(
      Array.from({ length: options.sessions }, async () => {
        while (now() < end) {
          await insert();
          done++;
        }
      }),
    );
    const row = {
      latency: summarize(samples),
      perSecond: done / (Math.min(options.durationMs, 5000) / 1000),
    };
    log(
      `  commit floor: p50 ${row.latency.p50.toFixed(2)} ms, p99 ${row.latency.p99.toFixed(2)} ms; ${row.perSecond.toFixed(0)} commits/s`,
    );
    return row;
  } finally {
    client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const log = (message: string) => console.error(message);
const UPSTREAM = join(process.cwd(), "test/mcp-gateway/faulty-server.mjs");
const FLOOR = join(process.cwd(), "test/bench/gateway-floor.mjs");
const GATEWAY_BIN = join(process.cwd(), "node_modules", ".bin", "countersign-mcp-gateway");
// The gateways' outcome spool (lib/mcp-gateway/spool.ts: part of an allowed call's cost) in a
// folder of the bench's own, not the user's state directory; removed when the bench exits.
const SPOOL = mkdtempSync(join(tmpdir(), "countersign-bench-spool-"));
process.once("exit", () => rmSync(SPOOL, { recursive: true, force: true }));

type Session = { client: Client; pid: number | undefined; close: () => Promise<void> };

async function session(args: string[]): Promise<Session> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env: { PATH: process.env.PATH ?? "" },
    stderr: "ignore",
  });
  const client = new Client({ name: "bench-client", version: "1.0.0" });
  await client.connect(transport);
  return { client, pid: transport.pid ?? undefined, close: () => client.close() };
}

const direct = () => session([UPSTREAM]);
const floor = () => session([FLOOR, process.execPath, UPSTREAM]);
const gateway = (target: Target) =>
  session([
    GATEWAY_BIN,
    "--url",
    `http://${target.endpoint.host}:${target.endpoint.port}`,
    "--key",
    target.agentKey,
    "--name",
    "bench",
    "--spool",
    SPOOL,
    "--",
    process.execPath,
    UPSTREAM,
  ]);

/** One tools/call; throws unless it came back as `expectError` says. */
async function call(client: Client, name: "echo" | "hang", expectError: boolean) {
  const result = (await client.callTool({ name, arguments: { n: 1 } })) as CallToolResult;
  if (Boolean(result.isError) !== expectError)
    throw new Error(`${name}: unexpected answer ${JSON.stringify(result).slice(0, 300)}`);
}

/** A path measured one call at a time: its calls, and the meters to read around each block. */
type TimedPath = { path: PathName; s: Session; work: () => Promise<void>; serverPid?: number };

/**
 * Times the paths' calls one at a time, `options.sequential` each, in alternating blocks of
 * BLOCK calls (a, b, a, b, …): on a shared machine whose load drifts from minute to minute, paths
 * compared with each other (allowed and denied) see the same load. CPU is read around each block.
 */
async function timed(
  paths: TimedPath[],
  options: GatewayBenchOptions,
  sqldPid: number | undefined,
): Promise<PathRow[]> {
  const BLOCK = 50;
  for (const p of paths) for (let i = 0; i < 30; i++) await p.work(); // warm-up (JIT, connections, the tools/list lookup)
  const acc = paths.map(() => ({
    samples: [] as number[],
    server: 0,
    own: 0,
    sqld: 0,
    waiting: 0,
  }));
  for (let done = 0; done < options.sequential; done += BLOCK) {
    const n = Math.min(BLOCK, options.sequential - done);
    for (const [k, p] of paths.entries()) {
      await waitIdle(p.serverPid, 10_000);
      const server = cpuMeter(p.serverPid);
      const own = cpuMeter(p.s.pid);
      const sqld = cpuMeter(p.serverPid === undefined ? undefined : sqldPid);
      const thread = threadMeter(p.serverPid);
      const blockStart = now();
      for (let i = 0; i < n; i++) {
        const start = now();
        await p.work();
        acc[k]!.samples.push(now() - start);
      }
      const seconds = (now() - blockStart) / 1000;
      // the outcome reports that follow the last calls are part of their cost
      await waitIdle(p.serverPid, 5_000);
      acc[k]!.server += server().serverMs;
      acc[k]!.own += own().serverMs;
      acc[k]!.sqld += sqld().serverMs;
      acc[k]!.waiting += thread().waitingForCpuMs * seconds;
    }
  }
  return paths.map((p, k) => {
    const a = acc[k]!;
    const per = (ms: number) => (Number.isNaN(ms) ? NaN : ms / options.sequential);
    const row: PathRow = {
      path: p.path,
      latency: summarize(a.samples),
      serverMs: p.serverPid === undefined ? NaN : per(a.server),
      gatewayMs: per(a.own),
      sqldMs: p.serverPid === undefined || sqldPid === undefined ? NaN : per(a.sqld),
      serverWaitingMs: p.serverPid === undefined ? NaN : per(a.waiting),
    };
    log(
      `  ${p.path}: p50 ${row.latency.p50.toFixed(2)} ms, p99 ${row.latency.p99.toFixed(2)} ms; CPU/call server ${row.serverMs.toFixed(2)} ms, gateway ${row.gatewayMs.toFixed(2)} ms; server waited for a CPU ${row.serverWaitingMs.toFixed(2)} ms/call`,
    );
    return row;
  });
}

async function throughput(
  path: "floor" | "allowed",
  open: () => Promise<Session>,
  options: GatewayBenchOptions,
  serverPid: number | undefined,
  sqldPid: number | undefined,
): Promise<GatewayThroughput> {
  log(`  ${path}: starting ${options.sessions} sessions…`);
  const sessions: Session[] = [];
  try {
    for (let i = 0; i < options.sessions; i++) sessions.push(await open());
    for (const s of sessions) for (let i = 0; i < 5; i++) await call(s.client, "echo", false);
    await waitIdle(serverPid, 10_000);
    const measureFrom = now() + options.warmupMs;
    const end = measureFrom + options.durationMs;
    let server = cpuMeter(serverPid);
    let sqld = cpuMeter(sqldPid);
    let thread = threadMeter(serverPid);
    const warm = setTimeout(() => {
      server = cpuMeter(serverPid);
      sqld = cpuMeter(sqldPid);
      thread = threadMeter(serverPid);
    }, options.warmupMs);
    const samples: number[] = [];
    await Promise.all(
      sessions.map(async (s) => {
        while (now() < end) {
          const start = now();
          await call(s.client, "echo", false);
          const done = now();
          if (start >= measureFrom && done <= end) samples.push(done - start);
        }
      }),
    );
    clearTimeout(warm);
    const serverThread = thread();
    const serverMs = server().serverMs;
    const sqldMs = sqld().serverMs;
    const n = samples.length;
    const row = {
      path,
      sessions: options.sessions,
      perSecond: n / (options.durationMs / 1000),
      latency: summarize(samples),
      serverMs: serverPid === undefined || n === 0 ? NaN : serverMs / n,
      sqldMs: sqldPid === undefined || n === 0 ? NaN : sqldMs / n,
      serverThread,
    };
    log(
      `  ${path}: ${row.perSecond.toFixed(0)} calls/s from ${options.sessions} sessions; server main thread per s: running ${serverThread.runningMs.toFixed(0)} ms, waiting for a CPU ${serverThread.waitingForCpuMs.toFixed(0)} ms, asleep ${serverThread.asleepMs.toFixed(0)} ms`,
    );
    return row;
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
  }
}

/** Policy rules for the bench's calls: `echo` allowed, `hang` denied (in every queue). */
async function benchRules() {
  const at = Date.now();
  await getDb()
    .insert(policyRules)
    .values(
      [
        { effect: "allow" as const, toolPattern: "echo", reason: null },
        { effect: "deny" as const, toolPattern: "hang", reason: "denied by the bench" },
      ].map((rule, position) => ({
        id: newId(),
        name: `bench ${rule.effect}`,
        queueId: null,
        position: 1_000_000 + position,
        agentKeyId: null,
        argPredicates: [],
        createdAt: at,
        updatedAt: at,
        ...rule,
      })),
    );
}

async function measure(
  database: "embedded" | "sqld",
  target: Target,
  options: GatewayBenchOptions,
  sqldPid: number | undefined,
): Promise<GatewayDatabaseResult> {
  await benchRules();
  const rows: PathRow[] = [];
  const sessions: Session[] = [];
  try {
    const d = await direct();
    sessions.push(d);
    const f = await floor();
    sessions.push(f);
    const g = await gateway(target);
    sessions.push(g);
    rows.push(
      ...(await timed(
        [
          { path: "direct", s: d, work: () => call(d.client, "echo", false) },
          { path: "floor", s: f, work: () => call(f.client, "echo", false) },
          {
            path: "allowed",
            s: g,
            work: () => call(g.client, "echo", false),
            serverPid: target.pid,
          },
          { path: "denied", s: g, work: () => call(g.client, "hang", true), serverPid: target.pid },
        ],
        options,
        sqldPid,
      )),
    );
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
  }
  const loops = [
    await throughput("floor", floor, options, undefined, undefined),
    await throughput("allowed", () => gateway(target), options, target.pid, sqldPid),
  ];
  return { database, rows, throughput: loops };
}

export async function gatewayScenario(
  options: GatewayBenchOptions,
  databases: ("embedded" | "sqld")[] = ["embedded", "sqld"],
  /** runs the Countersign server under `node --cpu-prof`, its profiles written here */
  profileDir?: string,
): Promise<GatewayResult> {
  const results: GatewayDatabaseResult[] = [];
  let floorOfCommits: CommitFloor | undefined;
  if (databases.includes("embedded")) {
    log("bench: MCP gateway, embedded database");
    floorOfCommits = await commitFloor(options);
    const target = await startCountersign({ profileDir });
    try {
      results.push(await measure("embedded", target, options, undefined));
    } finally {
      await target.stop();
    }
  }
  if (databases.includes("sqld")) {
    log("bench: MCP gateway, over sqld");
    const previousUrl = process.env.DATABASE_URL;
    let sqld: Sqld | undefined;
    let target: Target | undefined;
    try {
      sqld = await startSqld();
      closeDb();
      process.env.DATABASE_URL = sqld.url;
      await migrateDatabase();
      target = await startCountersign({
        sharedDatabaseUrl: sqld.url.replace(/^http:/, "ws:"),
        profileDir,
      });
      results.push(await measure("sqld", target, options, sqld.pid));
    } finally {
      await target?.stop();
      closeDb();
      await sqld?.stop();
      if (previousUrl === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = previousUrl;
    }
  }
  return { options, results, commitFloor: floorOfCommits };
}

/* ------------------------------------------------------------------ the report */

const f = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "–");

export function gatewayReport(result: GatewayResult): string[] {
  const { options } = result;
  const lines = [
    "### MCP gateway",
    "",
    `One MCP session per path, ${options.sequential} \`tools/call\`s one at a time per path (after 30 warm-up calls), the paths taking turns in blocks of 50 so that each sees the same load; a fast upstream tool (\`echo\` of test/mcp-gateway/faulty-server.mjs) over stdio. "added" is over calling the upstream directly; CPU is per call, from /proc (the Countersign server, the process in front of the upstream, and sqld); "server waited for a CPU" is how long per call the server's main thread was runnable but not running (/proc/PID/task/PID/schedstat): the machine's other work, not the gateway's.`,
    "",
    "| database | path | p50 / p99 ms | added p50 / p99 ms | goal | server CPU / call | gateway CPU / call | sqld CPU / call | server waited for a CPU / call |",
    "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |",
  ];
  for (const r of result.results) {
    const directRow = r.rows.find((row) => row.path === "direct");
    const allowed = r.rows.find((row) => row.path === "allowed");
    for (const row of r.rows) {
      const addedP50 = directRow ? row.latency.p50 - directRow.latency.p50 : NaN;
      const addedP99 = directRow ? row.latency.p99 - directRow.latency.p99 : NaN;
      const goal =
        row.path === "allowed"
          ? `≤ 5 / 15 ms — ${addedP50 <= 5 && addedP99 <= 15 ? "met" : "**missed**"}`
          : row.path === "denied" && allowed
            ? `as allowed: ${f(row.latency.p50 / allowed.latency.p50, 2)}× its p50, ${f(row.latency.p99 / allowed.latency.p99, 2)}× its p99`
            : "";
      lines.push(
        `| ${r.database} | ${row.path} | ${f(row.latency.p50, 2)} / ${f(row.latency.p99, 2)} | ${row.path === "direct" ? "–" : `${f(addedP50, 2)} / ${f(addedP99, 2)}`} | ${goal} | ${f(row.serverMs, 2)} ms | ${row.path === "direct" ? "–" : `${f(row.gatewayMs, 2)} ms`} | ${f(row.sqldMs, 2)} ms | ${f(row.serverWaitingMs, 2)} ms |`,
      );
    }
  }
  lines.push(
    "",
    `Throughput: a closed loop of ${options.sessions} MCP sessions (each its own gateway process and upstream), ${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured, every call allowed.`,
    "",
    'The server\'s main thread during the loop, per second of wall time (/proc/PID/task/PID/schedstat): "running" on a CPU, "waiting" runnable for a CPU the machine\'s other processes held, "asleep" neither (no work in the event loop, or blocked in a synchronous fsync).',
    "",
    "| database | path | calls/s | p50 / p99 ms | server CPU / call | sqld CPU / call | server main thread running / waiting for a CPU / asleep, ms per s |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
  );
  if (result.commitFloor)
    lines.push(
      `| embedded | commit floor: a bare one-INSERT write batch, fsync'd (the disk, no app) | ${f(result.commitFloor.perSecond, 0)} from ${options.sessions} writers | ${f(result.commitFloor.latency.p50, 2)} / ${f(result.commitFloor.latency.p99, 2)} one at a time | – | – | – |`,
    );
  for (const r of result.results)
    for (const t of r.throughput)
      lines.push(
        `| ${r.database} | ${t.path === "floor" ? "floor (proxy only)" : "allowed"} | ${f(t.perSecond, 0)} | ${f(t.latency.p50)} / ${f(t.latency.p99)} | ${f(t.serverMs, 2)} ms | ${f(t.sqldMs, 2)} ms | ${t.path === "floor" ? "–" : `${f(t.serverThread.runningMs, 0)} / ${f(t.serverThread.waitingForCpuMs, 0)} / ${f(t.serverThread.asleepMs, 0)}`} |`,
      );
  return lines;
}
