import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { closeDb } from "@/db/client";
import { freshDatabase } from "../support/database";
import { SERVER_ENTRY, serverCommand } from "../support/server";
import { now, sleep } from "./load";

// `npx tsx test/bench/cold-start.ts [--quick]` (or `npm run bench -- --scenarios=coldstart`): how
// long a production server takes from spawn to useful, on an already-built checkout. Each
// repetition spawns a new server and times spawn → `/api/health` answers 200 (the database is
// open and migrated) and spawn → the first page's HTML is served (`/sign-in`, rendered on the
// first request). Three ways to start: the production server (`node dist/server.js`) over an existing database (a restart), the
// same over no database yet (the first start runs every migration), and `npm start` (what an
// operator types: its `prestart` checks that the build is current, then that server).

export type ColdStartOptions = { repetitions: number };
export const COLD_START_DEFAULTS: ColdStartOptions = { repetitions: 7 };
export const COLD_START_QUICK: ColdStartOptions = { repetitions: 3 };

type Variant = "server, existing database" | "server, new database" | "npm start";
const VARIANTS: Variant[] = ["server, existing database", "server, new database", "npm start"];

export type ColdStartSample = {
  /** CPU time the started process group had used when health answered (robust to a busy machine) */
  healthCpuMs: number;
  /** spawn → first 200 from /api/health */
  healthMs: number;
  /** spawn → /sign-in HTML fully received (requested as soon as health answered) */
  pageMs: number;
  /** the first /sign-in request alone */
  firstPageRequestMs: number;
};

export type ColdStartResult = {
  options: ColdStartOptions;
  variants: { variant: Variant; samples: ColdStartSample[] }[];
  loadAverage: { start: number[]; end: number[] };
  seconds: number;
};

const log = (message: string) => console.error(message);
const PAGE = "/sign-in";

// Servers still running when the process exits (a signal handler's process.exit included) are
// killed with their process group: `npm start` runs the server in a child of a shell.
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) killGroup(child, "SIGKILL");
});

function killGroup(child: ChildProcess, signal: NodeJS.Signals) {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // already gone
  }
}

async function stopGroup(child: ChildProcess) {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
    killGroup(child, "SIGTERM");
    const timer = setTimeout(() => killGroup(child, "SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  // npm may exit before the server it started: make sure the whole group is gone
  killGroup(child, "SIGKILL");
  running.delete(child);
}

/** A free loopback port in the range this benchmark may use. */
export async function freePortInRange(from = 4200, to = 4299): Promise<number> {
  const start = from + Math.floor(Math.random() * (to - from + 1));
  for (let k = 0; k <= to - from; k++) {
    const port = from + ((start - from + k) % (to - from + 1));
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once("error", () => resolve(false));
      probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`No free port in ${from}-${to}.`);
}

/** utime + stime of every live process in process group `pgid` (Linux /proc; NaN elsewhere). */
function groupCpuMs(pgid: number): number {
  let ticks = 0;
  try {
    for (const name of readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      let stat: string;
      try {
        stat = readFileSync(`/proc/${name}/stat`, "utf8");
      } catch {
        continue; // exited meanwhile
      }
      // fields after "(comm) ": state ppid pgrp … utime (12th) stime (13th)
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[2]) === pgid) ticks += Number(fields[11]) + Number(fields[12]);
    }
  } catch {
    return NaN;
  }
  return ticks * 10; // USER_HZ = 100
}

async function poll(url: string, child: ChildProcess, output: () => string): Promise<number> {
  const deadline = now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`The server exited during start-up:\n${output()}`);
    try {
      const response = await fetch(url);
      await response.arrayBuffer();
      if (response.status === 200) return now();
    } catch {
      // not listening yet
    }
    if (now() > deadline) throw new Error(`${url} did not answer 200 in 60 s:\n${output()}`);
    await sleep(10);
  }
}

async function startOnce(variant: Variant, databaseUrl: string): Promise<ColdStartSample> {
  const port = await freePortInRange();
  const root = process.cwd();
  const command =
    variant === "npm start"
      ? { file: "npm", args: ["start"] }
      : {
          file: process.execPath,
          args: [...serverCommand(root), "--hostname", "127.0.0.1", "--port", String(port)],
        };
  const spawnedAt = now();
  const child = spawn(command.file, command.args, {
    cwd: root,
    detached: true, // its own process group, to stop npm and the server under it together
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      COUNTERSIGN_QUIET: "1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  child.stdout!.on("data", (chunk) => (output += chunk));
  child.stderr!.on("data", (chunk) => (output += chunk));
  try {
    const base = `http://127.0.0.1:${port}`;
    const healthyAt = await poll(`${base}/api/health`, child, () => output);
    const healthCpuMs = groupCpuMs(child.pid!);
    const askedAt = now();
    const response = await fetch(`${base}${PAGE}`);
    const html = await response.text();
    const servedAt = now();
    if (response.status !== 200 || !html.includes("<html"))
      throw new Error(`${PAGE} answered ${response.status}: ${html.slice(0, 200)}`);
    return {
      healthCpuMs,
      healthMs: healthyAt - spawnedAt,
      pageMs: servedAt - spawnedAt,
      firstPageRequestMs: servedAt - askedAt,
    };
  } finally {
    await stopGroup(child);
  }
}

export async function coldStartScenario(
  options: ColdStartOptions = COLD_START_DEFAULTS,
): Promise<ColdStartResult> {
  const startedAt = Date.now();
  const loadStart = loadavg();
  if (
    !existsSync(join(process.cwd(), ".next", "BUILD_ID")) ||
    !existsSync(join(process.cwd(), SERVER_ENTRY))
  )
    throw new Error("No production build: run `npm run build` first.");
  const dirs: string[] = [];
  try {
    // the "existing database": made and migrated once, reused by every restart
    const existing = await freshDatabase("bench-coldstart");
    closeDb();
    dirs.push(join(existing.slice("file:".length), ".."));
    const variants: ColdStartResult["variants"] = VARIANTS.map((variant) => ({
      variant,
      samples: [],
    }));
    // one start of each variant per round, so a change in the machine's load touches all alike
    for (let round = 0; round < options.repetitions + 1; round++) {
      for (const entry of variants) {
        let url = existing;
        if (entry.variant === "server, new database") {
          const dir = mkdtempSync(join(tmpdir(), "countersign-bench-coldstart-new-"));
          dirs.push(dir);
          url = `file:${join(dir, "countersign.db")}`;
        }
        const sample = await startOnce(entry.variant, url);
        // round 0 warms the disk cache and is not counted: every sample starts from warm files
        if (round > 0) entry.samples.push(sample);
        log(
          `coldstart: ${round === 0 ? "(warm-up) " : ""}${entry.variant}: health ${sample.healthMs.toFixed(0)} ms (${sample.healthCpuMs.toFixed(0)} ms CPU), ${PAGE} ${sample.pageMs.toFixed(0)} ms`,
        );
      }
    }
    return {
      options,
      variants,
      loadAverage: { start: loadStart, end: loadavg() },
      seconds: (Date.now() - startedAt) / 1000,
    };
  } finally {
    await Promise.all([...running].map(stopGroup));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

/* ------------------------------------------------------------------ the report */

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const cell = (xs: number[]) =>
  xs.length ? `${median(xs).toFixed(0)} / ${Math.max(...xs).toFixed(0)} ms` : "–";

export function coldStartReport(result: ColdStartResult): string[] {
  const lines = [
    "## Cold start (already-built checkout)",
    "",
    `| start | spawn → /api/health 200, median / max | spawn → ${PAGE} HTML served, median / max | first ${PAGE} request alone, median / max | CPU time used until healthy, median / max |`,
    "| --- | ---: | ---: | ---: | ---: |",
  ];
  for (const { variant, samples } of result.variants) {
    lines.push(
      `| ${variant} | ${cell(samples.map((s) => s.healthMs))} | ${cell(samples.map((s) => s.pageMs))} | ${cell(samples.map((s) => s.firstPageRequestMs))} | ${cell(samples.map((s) => s.healthCpuMs))} |`,
    );
  }
  lines.push(
    "",
    `- ${result.options.repetitions} starts of each (after one unmeasured start each, so files are in the OS cache), one of each per round. The server is spawned as \`node dist/server.js\` (lib/http/server.ts); \`npm start\` includes its \`prestart\` check that the build is current (no rebuild). ${PAGE} is requested as soon as health answers.`,
    `- Load average: ${result.loadAverage.start.map((x) => x.toFixed(2)).join(" ")} at the start, ${result.loadAverage.end.map((x) => x.toFixed(2)).join(" ")} at the end; ${result.seconds.toFixed(0)} s in all.`,
  );
  return lines;
}

/* ------------------------------------------------------------------ standalone */

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const quick = process.argv.includes("--quick");
  const stop = (code: number) => () => {
    console.error("\ncoldstart: stopping…");
    process.exit(code); // the exit handler above kills the servers
  };
  process.once("SIGINT", stop(130));
  process.once("SIGTERM", stop(143));
  coldStartScenario(quick ? COLD_START_QUICK : COLD_START_DEFAULTS)
    .then((result) => console.log(coldStartReport(result).join("\n")))
    .catch((error) => {
      console.error(error);
      process.exitCode = 1;
    });
}
