import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { WorkerReply, WorkerRequest } from "./fanout-worker";
import {
  cpuMeter,
  keepAliveAgent,
  monoMs,
  openLoop,
  request,
  settledRssKiB,
  sleep,
  summarize,
  waitIdle,
  type CpuShare,
  type HttpResult,
  type Summary,
} from "./load";
import { pauseBody, stopChild, trackChild, type Target } from "./targets";

// Fan-out: thousands of reviewers' streams on one server, pauses at a modest rate, and how long
// each `batch.created` takes to reach every one of them; plus what an idle stream costs the server
// in memory. The stream clients live in generator processes (fanout-worker.ts), a few thousand
// raw sockets each, so the generator is not what is measured.

const log = (message: string) => console.error(message);

export type FanoutLoad = { clients: number; rate: number };

export type FanoutResult = FanoutLoad & {
  workers: number;
  /** per (client, pause): from sending the pause to that client parsing its batch.created */
  latency: Summary;
  expected: number;
  delivered: number;
  /** streams the server ended during the run */
  ended: number;
  pauseHttp: Summary;
  pauseStatuses: Record<string, number>;
  lateness: Summary;
  measuredMs: number;
  skipped: number;
  cpu: CpuShare;
  /** opening every stream, wall time */
  connectMs: number;
  /** server RSS (KiB) settled before and after opening the streams, and the difference per stream */
  rssBeforeKiB: number;
  rssAfterKiB: number;
  perStreamKiB: number;
};

/** Generator processes for `clients` streams: about 1,250 each, at most 4. */
const workersFor = (clients: number) => Math.min(4, Math.ceil(clients / 1250));

class Worker {
  private nextId = 0;
  private readonly pending = new Map<
    number,
    { resolve: (r: WorkerReply) => void; reject: (e: Error) => void }
  >();

  constructor(
    readonly index: number,
    private readonly child: ChildProcess,
  ) {
    child.on("message", (reply: WorkerReply) => {
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.kind === "failed")
        waiter?.reject(new Error(`generator ${index}: ${reply.message}`));
      else waiter?.resolve(reply);
    });
    child.once("exit", (code, signal) => {
      for (const waiter of this.pending.values())
        waiter.reject(new Error(`generator ${index} exited (${signal ?? code})`));
      this.pending.clear();
    });
  }

  static start(index: number): Worker {
    const child = fork(fileURLToPath(new URL("./fanout-worker.ts", import.meta.url)), [], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    return new Worker(index, trackChild(child));
  }

  ask<K extends WorkerReply["kind"]>(
    message: DistributiveOmit<WorkerRequest, "id">,
    timeoutMs: number,
  ): Promise<Extract<WorkerReply, { kind: K }>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new Error(`generator ${this.index}: no answer to '${message.kind}' in ${timeoutMs} ms`),
        );
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply as Extract<WorkerReply, { kind: K }>);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.child.send({ ...message, id } as WorkerRequest);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null && this.child.connected)
      await this.ask({ kind: "close" }, 5000).catch(() => undefined);
    await stopChild(this.child, 2000);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function countStatuses(results: HttpResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) {
    const key = r.status === 0 ? `error(${r.error ?? "?"})` : String(r.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

export async function fanoutScenario(
  target: Target,
  load: FanoutLoad,
  timing: { warmupMs: number; durationMs: number; deliveryTimeoutMs: number },
): Promise<FanoutResult> {
  const label = `f${load.clients}-${Date.now().toString(36)}`;
  const workers = Array.from({ length: workersFor(load.clients) }, (_, i) => Worker.start(i));
  const agent = keepAliveAgent(64);
  try {
    const rssBeforeKiB = await settledRssKiB(target.pid);
    log(
      `  ${target.name}: fan-out to ${load.clients} streams (${workers.length} generator processes): connecting…`,
    );
    const connectStart = monoMs();
    // 48 connections in flight in all: enough to open thousands in seconds, few enough that the
    // server's accept queue never overflows
    const concurrency = Math.max(1, Math.floor(48 / workers.length));
    await Promise.all(
      workers.map((w, i) =>
        w.ask(
          {
            kind: "open",
            endpoint: target.endpoint,
            path: "/api/v1/stream",
            token: target.reviewerToken,
            count: shareOf(load.clients, workers.length, i),
            connectConcurrency: concurrency,
          },
          // a loaded 2-core machine opens 30-150 Countersign streams a second
          Math.max(60_000, load.clients * 50),
        ),
      ),
    );
    const connectMs = monoMs() - connectStart;
    const rssAfterKiB = await settledRssKiB(target.pid);
    log(
      `  ${target.name}:   ${load.clients} streams open in ${(connectMs / 1000).toFixed(1)} s; RSS ${mib(rssBeforeKiB)} → ${mib(rssAfterKiB)} MiB; ${timing.warmupMs / 1000} s warm-up + ${timing.durationMs / 1000} s of pauses at ${load.rate}/s`,
    );

    const warmCount = Math.round((load.rate * timing.warmupMs) / 1000);
    const measuredCount = Math.round((load.rate * timing.durationMs) / 1000);
    const sent: [string, number][] = [];
    const all: string[] = [];
    const responses: Promise<HttpResult>[] = [];
    const measuredResponses: Promise<HttpResult>[] = [];
    // As in the pause scenario: more than a second of pauses unanswered and the generator skips
    // sends until the server catches up, and the report says the server was overloaded.
    const backlogLimit = Math.max(10, load.rate);
    let inFlight = 0;
    let skipped = 0;
    let measureFrom = monoMs();
    let cpu = cpuMeter(target.pid);
    const lateness = await openLoop(load.rate, warmCount + measuredCount, (i) => {
      const token = `${label}-${i}`;
      if (i === warmCount) {
        measureFrom = monoMs();
        cpu = cpuMeter(target.pid);
      }
      if (inFlight > backlogLimit) {
        if (i >= warmCount) skipped++;
        return;
      }
      inFlight++;
      all.push(token);
      if (i >= warmCount) sent.push([token, monoMs()]);
      const response = request(target.endpoint, agent, {
        method: "POST",
        path: "/api/v1/runs",
        token: target.agentKey,
        body: pauseBody(token),
      }).finally(() => inFlight--);
      responses.push(response);
      if (i >= warmCount) measuredResponses.push(response);
    });
    const measuredMs = monoMs() - measureFrom;
    const settled = await Promise.all(responses);
    const measured = await Promise.all(measuredResponses);
    const created = settled.filter((r) => r.status === 201).length;

    // every 201 pause reaches every stream; wait for that (or the timeout), then collect
    const expectedAll = created * load.clients;
    const deadline = monoMs() + timing.deliveryTimeoutMs;
    for (;;) {
      const progress = await Promise.all(
        workers.map((w) => w.ask<"progress">({ kind: "progress", tokens: all }, 10_000)),
      );
      const received = progress.reduce((sum, p) => sum + p.received, 0);
      if (received >= expectedAll) break;
      if (monoMs() > deadline) {
        log(
          `  ! ${target.name}: ${expectedAll - received} of ${expectedAll} deliveries missing after ${timing.deliveryTimeoutMs / 1000} s`,
        );
        break;
      }
      await sleep(200);
    }
    const cpuShare = cpu();
    const samples = await Promise.all(
      workers.map((w) => w.ask<"samples">({ kind: "collect", sent }, 60_000)),
    );
    const latencies = samples.flatMap((s) => s.latencies);
    return {
      ...load,
      workers: workers.length,
      latency: summarize(latencies),
      expected: measured.filter((r) => r.status === 201).length * load.clients,
      delivered: latencies.length,
      ended: samples.reduce((sum, s) => sum + s.ended, 0),
      pauseHttp: summarize(measured.map((r) => r.doneAt - r.sentAt)),
      pauseStatuses: countStatuses(settled),
      lateness: summarize(lateness.slice(warmCount)),
      measuredMs,
      skipped,
      cpu: cpuShare,
      connectMs,
      rssBeforeKiB,
      rssAfterKiB,
      perStreamKiB: (rssAfterKiB - rssBeforeKiB) / load.clients,
    };
  } finally {
    agent.destroy();
    await Promise.all(workers.map((w) => w.stop()));
    // let the server notice thousands of closed streams before the next load
    await sleep(500);
    await waitIdle(target.pid, 30_000);
  }
}

const shareOf = (total: number, parts: number, i: number) =>
  Math.floor(total / parts) + (i < total % parts ? 1 : 0);

const mib = (kib: number) => (kib / 1024).toFixed(0);

/* ------------------------------------------------------------------ the report */

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const pair = (s: Summary | undefined) => (s ? `${ms(s.p50)} / ${ms(s.p99)} ms` : "–");
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || !Number.isFinite(a / b) ? "–" : `${(a / b).toFixed(1)}×`;
const int = (x: number) => Math.round(x).toLocaleString("en-US");
const verdict = (met: boolean | undefined) =>
  met === undefined ? "" : met ? " — met" : " — **missed**";

/** The fan-out rows of the report: a summary table with goals, then the details. */
export function fanoutReport(
  loads: FanoutLoad[],
  cs: FanoutResult[] | undefined,
  floor: FanoutResult[] | undefined,
): string[] {
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`| ${cells.join(" | ")} |`);
  const at = (results: FanoutResult[] | undefined, load: FanoutLoad) =>
    results?.find((r) => r.clients === load.clients && r.rate === load.rate);
  const healthy = (r: FanoutResult) => r.skipped === 0 && r.delivered === r.expected;
  row(["measurement", "load", "Countersign", "floor", "Countersign / floor", "goal"]);
  row(["---", "---", "---:", "---:", "---:", "---"]);
  for (const load of loads) {
    const c = at(cs, load);
    const f = at(floor, load);
    const met = c
      ? healthy(c) && c.latency.p99 <= 250 && (!f || c.latency.p99 <= 1.5 * f.latency.p99)
      : undefined;
    row([
      "pause → `batch.created` on every stream, p50 / p99",
      `${int(load.clients)} streams, ${load.rate} pauses/s`,
      pair(c?.latency),
      pair(f?.latency),
      c && f
        ? `${ratio(c.latency.p50, f.latency.p50)} / ${ratio(c.latency.p99, f.latency.p99)}`
        : "–",
      `p99 ≤ 250 ms and ≤ 1.5× floor${verdict(met)}`,
    ]);
  }
  // Memory at the largest load only: with a few hundred streams the difference drowns in heap the
  // process had already grown to and reuses (the details show every load's RSS).
  for (const load of loads.slice(-1)) {
    const c = at(cs, load);
    const f = at(floor, load);
    row([
      "server memory per idle stream (RSS after − before opening) / streams",
      `${int(load.clients)} idle streams`,
      c ? `${c.perStreamKiB.toFixed(1)} KiB` : "–",
      f ? `${f.perStreamKiB.toFixed(1)} KiB` : "–",
      ratio(c?.perStreamKiB, f?.perStreamKiB),
      `≤ 20 KiB${verdict(c ? c.perStreamKiB <= 20 : undefined)}`,
    ]);
  }
  lines.push("", "#### Fan-out details", "");
  row([
    "target",
    "streams × pauses/s",
    "generators",
    "connect",
    "RSS before → after",
    "delivered / expected",
    "pause HTTP p50 / p99",
    "max",
    "pacer late p99",
    "CPU bench / other",
    "server CPU / pause",
  ]);
  row(["---", "---", "---:", "---:", "---:", "---:", "---", "---:", "---:", "---:", "---:"]);
  for (const [name, results] of [
    ["Countersign", cs],
    ["floor", floor],
  ] as const) {
    for (const r of results ?? []) {
      row([
        name,
        `${int(r.clients)} × ${r.rate}/s (${(r.measuredMs / 1000).toFixed(1)} s${r.skipped ? `, **overloaded**: ${r.skipped} sends skipped` : ""}${r.ended ? `, **${r.ended} streams ended**` : ""})`,
        String(r.workers),
        `${(r.connectMs / 1000).toFixed(1)} s`,
        `${mib(r.rssBeforeKiB)} → ${mib(r.rssAfterKiB)} MiB`,
        `${int(r.delivered)} / ${int(r.expected)}`,
        `${pair(r.pauseHttp)} (${Object.entries(r.pauseStatuses)
          .map(([k, v]) => `${k}×${int(v)}`)
          .join(", ")})`,
        `${ms(r.latency.max)} ms`,
        `${ms(r.lateness.p99)} ms`,
        Number.isNaN(r.cpu.oursPct)
          ? "–"
          : `${r.cpu.oursPct.toFixed(0)}% / ${r.cpu.otherPct.toFixed(0)}%`,
        Number.isNaN(r.cpu.serverMs) || r.pauseHttp.n === 0
          ? "–"
          : `${(r.cpu.serverMs / r.pauseHttp.n).toFixed(1)} ms`,
      ]);
    }
  }
  lines.push(
    "",
    '- Fan-out: the stream clients (`GET /api/v1/stream`, one reviewer token, raw node:net sockets that de-chunk and cut SSE messages without an HTTP client library) are spread over generator processes (test/bench/fanout-worker.ts, up to 4, ~1,250 streams each); the pauses (`POST /api/v1/runs`, one-call batch) are sent open-loop at the fixed rate from the bench process. Latency is from writing the pause to each client parsing its `batch.created`, one sample per (stream, pause), both ends on CLOCK_MONOTONIC. "server CPU / pause" includes the pause\'s fan-out to every stream.',
    "- Memory per idle stream: the server's VmRSS (/proc/<pid>/status; median of 5 readings after the process went idle) before opening the streams and after, divided by the number of streams. RSS includes garbage not yet collected, so this is an upper bound.",
  );
  return lines;
}
