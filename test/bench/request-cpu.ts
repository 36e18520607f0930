import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freshDatabase } from "../support/database";
import { makeTeam } from "../support/factories";
import { startServer } from "../support/server";
import { processCpuMs, waitIdle } from "./load";
import { pauseBody, startFloor } from "./targets";

// `npx tsx test/bench/request-cpu.ts [N]`: the production server's CPU time per request (its
// utime + stime in /proc/<pid>/stat, before and after), for N sequential pauses (POST /api/v1/runs
// with a one-call batch) and N decisions (POST /api/v1/calls/{id}/decision) over one keep-alive
// connection, once the server is idle after a warm-up (`--warmup=W` of each, default 100; 0
// measures the JIT compiling the request path too, a few thousand a warm server; the bench's
// `writes` scenario warms up for 3 s of mixed requests). `--floor`: the same loops against the
// floor (test/bench/floor-server.ts) instead. `--idle=S`: S seconds without requests between the
// warm-up and the measured loops (the server's CPU in each printed). `--v8=FLAG` (repeatable):
// a V8 or Node option for Countersign's server. Needs `npm run build` first, and Linux.
// `--profile=DIR` writes the server's V8 CPU profile there (its whole life, start-up included; V8
// samples wall time, so a commit's fsync wait or the server waiting for a core shows as time in
// whatever was running). `--perf=DIR` (Linux perf, root): `perf record -e cpu-clock -g` of the
// server during each measured loop only (DIR/pause.data, DIR/decision.data; JavaScript named
// through --perf-basic-prof), which samples CPU time alone; `npx tsx test/bench/perf-layers.ts
// DIR/pause.data N` sorts it by layer. Figures taken with either option carry the profiler's own
// cost: measure without them.

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function post(baseUrl: string, path: string, token: string, body: unknown): Promise<any> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const sent = request(
      `${baseUrl}${path}`,
      {
        method: "POST",
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk) => (text += chunk));
        response.on("end", () => {
          if (response.statusCode! >= 300)
            reject(new Error(`${path} answered ${response.statusCode}: ${text}`));
          else resolve(JSON.parse(text));
        });
      },
    );
    sent.on("error", reject);
    sent.end(payload);
  });
}

/** What the loops talk to: Countersign's production server, or the floor (test/bench/floor-server.ts). */
type Server = {
  baseUrl: string;
  pid: number;
  agentKey: string;
  reviewerToken: string;
  stop(): Promise<void>;
};

async function startCountersign(nodeArgs: string[]): Promise<Server> {
  const databaseUrl = await freshDatabase("request-cpu");
  const { agent: agentKey, reviewer } = await makeTeam();
  const server = await startServer({ databaseUrl, nodeArgs });
  return {
    baseUrl: server.baseUrl,
    pid: server.process.pid!,
    agentKey: agentKey.key,
    reviewerToken: reviewer.token,
    stop: server.stop,
  };
}

async function startFloorServer(): Promise<Server> {
  const floor = await startFloor();
  return {
    baseUrl: `http://${floor.endpoint.host}:${floor.endpoint.port}`,
    pid: floor.pid!,
    agentKey: floor.agentKey,
    reviewerToken: floor.reviewerToken,
    stop: floor.stop,
  };
}

const option = (name: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

async function main() {
  const n = Number(process.argv[2]) || 400;
  const warmup = Number(option("warmup") ?? 100);
  // `--profile=DIR`: the server runs under `node --cpu-prof` (summarize with profile-summary.ts)
  const profile = option("profile");
  const perf = option("perf");
  if (perf) mkdirSync(perf, { recursive: true });
  const server = process.argv.includes("--floor")
    ? await startFloorServer()
    : await startCountersign([
        ...process.argv.filter((a) => a.startsWith("--v8=")).map((a) => a.slice(5)),
        ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
        // (V8 then also writes a code log: into DIR, not the server's working directory)
        ...(perf
          ? [
              "--perf-basic-prof",
              "--interpreted-frames-native-stack",
              "--no-logfile-per-isolate",
              `--logfile=${join(perf, "v8.log")}`,
            ]
          : []),
      ]);
  try {
    const pid = server.pid;
    const pending: { id: string; revision: number }[] = [];
    const pause = async (i: number) => {
      const run = await post(
        server.baseUrl,
        "/api/v1/runs",
        server.agentKey,
        pauseBody(`cpu-${i}`),
      );
      pending.push(run.batches[0].calls[0]);
    };
    const decide = async () => {
      const call = pending.shift()!;
      await post(server.baseUrl, `/api/v1/calls/${call.id}/decision`, server.reviewerToken, {
        outcome: "approve",
        expectedRevision: call.revision,
      });
    };
    const measure = async (label: string, work: (i: number) => Promise<void>) => {
      await waitIdle(pid, 20_000); // as the bench does: start-up work done
      const recorder = perf ? await startPerf(pid, join(perf, `${label}.data`)) : undefined;
      const before = processCpuMs(pid);
      const started = performance.now();
      for (let i = 0; i < n; i++) await work(i);
      const cpu = (processCpuMs(pid) - before) / n;
      const wall = (performance.now() - started) / n;
      if (recorder) await stopPerf(recorder);
      console.log(
        `${label} (n=${n}, warm-up ${warmup}): ${cpu.toFixed(2)} ms server CPU, ${wall.toFixed(2)} ms wall each`,
      );
    };
    for (let i = 0; i < warmup; i++) await pause(-1 - i);
    for (let i = 0; i < warmup; i++) await decide();
    // as the bench's Countersign waits while the floor runs its scenarios
    const idle = Number(option("idle") ?? 0);
    const perSecond: number[] = [];
    for (let second = 0; second < idle; second++) {
      const before = processCpuMs(server.pid);
      await sleep(1000);
      perSecond.push(processCpuMs(server.pid) - before);
    }
    if (idle) console.log(`idle CPU ms per second: ${perSecond.join(" ")}`);
    await measure("pause", pause);
    await measure("decision", decide);
  } finally {
    agent.destroy();
    await server.stop();
  }
}

/** `perf record` of the server's CPU (not wall) time, call stacks included, until stopPerf. */
async function startPerf(pid: number, file: string): Promise<ChildProcess> {
  const recorder = spawn(
    "perf",
    ["record", "-e", "cpu-clock", "-F", "1999", "-g", "-p", String(pid), "-o", file],
    { stdio: ["ignore", "ignore", "inherit"] },
  );
  await sleep(500); // perf attaches to every thread of the process before it samples
  if (recorder.exitCode !== null) throw new Error("perf record failed (is perf installed?)");
  return recorder;
}

async function stopPerf(recorder: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => recorder.once("exit", resolve));
  recorder.kill("SIGINT");
  await exited;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
