import { readdirSync, readFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { performance } from "node:perf_hooks";

// The load generator, shared by every target: raw node:http over keep-alive agents (no fetch, to
// keep the client's own cost low and comparable), a minimal SSE reader, an open-loop pacer and
// percentiles. Nothing here knows which server it talks to.

export const now = () => performance.now();

/**
 * Milliseconds on CLOCK_MONOTONIC, which every process on the machine shares (performance.now()
 * counts from each process's own start): for latencies measured across generator processes.
 */
export const monoMs = () => Number(process.hrtime.bigint() / 1000n) / 1000;

export type Endpoint = { host: string; port: number };

export function keepAliveAgent(maxSockets: number): http.Agent {
  return new http.Agent({
    keepAlive: true,
    maxSockets,
    maxFreeSockets: maxSockets,
    scheduling: "fifo",
  });
}

export type HttpResult = {
  status: number;
  text: string;
  sentAt: number;
  doneAt: number;
  error?: string;
};

/** One JSON request; never rejects (a failed request resolves with status 0 and `error`). */
export function request(
  endpoint: Endpoint,
  agent: http.Agent,
  options: { method: "GET" | "POST"; path: string; token?: string; body?: unknown },
): Promise<HttpResult> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string | number> = { accept: "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (payload !== undefined) {
    headers["content-type"] = "application/json";
    headers["content-length"] = Buffer.byteLength(payload);
  }
  return new Promise((resolve) => {
    let sentAt = 0;
    const req = http.request(
      {
        host: endpoint.host,
        port: endpoint.port,
        method: options.method,
        path: options.path,
        headers,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            text: Buffer.concat(chunks).toString("utf8"),
            sentAt,
            doneAt: now(),
          }),
        );
        res.on("error", (error) =>
          resolve({ status: 0, text: "", sentAt, doneAt: now(), error: error.message }),
        );
      },
    );
    req.on("error", (error) =>
      resolve({ status: 0, text: "", sentAt, doneAt: now(), error: error.message }),
    );
    sentAt = now();
    req.end(payload);
  });
}

export function parseJson<T>(result: HttpResult, what: string, expected: number[] = [200, 201]): T {
  if (!expected.includes(result.status)) {
    throw new Error(`${what}: HTTP ${result.status} ${result.error ?? result.text.slice(0, 300)}`);
  }
  return JSON.parse(result.text) as T;
}

/* ------------------------------------------------------------------ SSE clients */

/** Called for every `batch.created` message a stream client receives, with the call's toolCallId. */
export type BatchCreatedListener = (client: number, toolCallId: string, receivedAt: number) => void;

export type StreamPool = {
  connected: number;
  /** messages of any kind received, across clients */
  messages: () => number;
  close: () => void;
};

const EVENT_LINE = "event: batch.created";
const TOOL_CALL_ID = '"toolCallId":"';

/**
 * Opens `count` SSE connections (`connectConcurrency` at a time) and resolves once every one has
 * answered 200 and sent its first bytes. Parsing is minimal on purpose: split on blank lines, look
 * for the event line, pull the toolCallId out of the data without JSON.parse.
 */
export async function openStreams(
  endpoint: Endpoint,
  options: {
    path: string;
    token: string;
    count: number;
    onBatchCreated: BatchCreatedListener;
    connectConcurrency?: number;
  },
): Promise<StreamPool> {
  const agent = keepAliveAgent(options.count + 16);
  const requests: http.ClientRequest[] = [];
  let messages = 0;
  let closing = false;

  const connect = (client: number) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(
        {
          host: endpoint.host,
          port: endpoint.port,
          path: options.path,
          headers: { accept: "text/event-stream", authorization: `Bearer ${options.token}` },
          agent,
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            reject(new Error(`stream client ${client}: HTTP ${res.statusCode}`));
            return;
          }
          res.setEncoding("utf8");
          let buffer = "";
          let first = true;
          res.on("data", (chunk: string) => {
            const receivedAt = now();
            if (first) {
              first = false;
              resolve();
            }
            buffer = buffer.length === 0 ? chunk : buffer + chunk;
            let end: number;
            while ((end = buffer.indexOf("\n\n")) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              if (block.charCodeAt(0) === 58 /* ':' */) continue; // a comment
              messages++;
              if (block.indexOf(EVENT_LINE) < 0) continue;
              const start = block.indexOf(TOOL_CALL_ID);
              if (start < 0) continue;
              const from = start + TOOL_CALL_ID.length;
              options.onBatchCreated(
                client,
                block.slice(from, block.indexOf('"', from)),
                receivedAt,
              );
            }
          });
          res.on("error", () => undefined);
          res.on("end", () => {
            if (!closing) console.error(`  ! stream client ${client} ended early`);
          });
        },
      );
      req.on("error", (error) => (closing ? undefined : reject(error)));
      req.setTimeout(0);
      requests.push(req);
      req.end();
    });

  const pool: StreamPool = {
    connected: 0,
    messages: () => messages,
    close: () => {
      closing = true;
      for (const req of requests) req.destroy();
      agent.destroy();
    },
  };
  try {
    let nextClient = 0;
    const workers = Array.from(
      { length: Math.min(options.connectConcurrency ?? 50, options.count) },
      async () => {
        while (nextClient < options.count) {
          await connect(nextClient++);
          pool.connected++;
        }
      },
    );
    await Promise.all(workers);
  } catch (error) {
    pool.close();
    throw error;
  }
  return pool;
}

/**
 * Raw-socket SSE clients (node:net, no http.Agent or HTTP parser per message): the generator for
 * thousands of streams, where the client's own cost per message must stay far below the server's.
 * Reads the status line and headers, then the chunked body, and reports every `batch.created`
 * with its toolCallId and when it arrived (`monoMs`).
 */
export async function openRawStreams(
  endpoint: Endpoint,
  options: {
    path: string;
    token: string;
    count: number;
    onBatchCreated: BatchCreatedListener;
    connectConcurrency?: number;
    /** how long one connection may take to answer its headers */
    connectTimeoutMs?: number;
  },
): Promise<RawStreamPool> {
  const sockets = new Set<net.Socket>();
  let closing = false;
  let ended = 0;
  const requestText =
    `GET ${options.path} HTTP/1.1\r\nHost: ${endpoint.host}:${endpoint.port}\r\n` +
    `Accept: text/event-stream\r\nAuthorization: Bearer ${options.token}\r\n\r\n`;

  const connect = (client: number) =>
    new Promise<void>((resolve, reject) => {
      const socket = net.connect({ host: endpoint.host, port: endpoint.port });
      sockets.add(socket);
      socket.setNoDelay(true);
      // latin1 maps bytes to chars one to one, so chunk sizes (in bytes) index the string directly
      socket.setEncoding("latin1");
      let opened = false;
      const timer = setTimeout(
        () => fail(`no answer in ${options.connectTimeoutMs ?? 30_000} ms`),
        options.connectTimeoutMs ?? 30_000,
      );
      const fail = (why: string) => {
        if (opened || closing) return;
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(`stream client ${client}: ${why}`));
      };
      const body = new SseBody((block, receivedAt) => {
        if (block.indexOf(EVENT_LINE) < 0) return;
        const start = block.indexOf(TOOL_CALL_ID);
        if (start < 0) return;
        const from = start + TOOL_CALL_ID.length;
        options.onBatchCreated(client, block.slice(from, block.indexOf('"', from)), receivedAt);
      });
      let head = "";
      socket.on("data", (text: string) => {
        const receivedAt = monoMs();
        if (opened) return body.feed(text, receivedAt);
        head += text;
        const end = head.indexOf("\r\n\r\n");
        if (end < 0) return;
        const status = head.slice(0, head.indexOf("\r\n"));
        if (!/^HTTP\/1\.1 200 /.test(status)) return fail(`answered ${status}`);
        body.chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head.slice(0, end));
        opened = true;
        clearTimeout(timer);
        resolve();
        const rest = head.slice(end + 4);
        head = "";
        if (rest.length > 0) body.feed(rest, receivedAt);
      });
      socket.on("error", (error) => fail(error.message));
      socket.write(requestText);
      socket.on("close", () => {
        sockets.delete(socket);
        if (!opened) return fail("closed before answering");
        if (!closing) ended++;
      });
    });

  const pool: RawStreamPool = {
    connected: 0,
    ended: () => ended,
    close: () => {
      closing = true;
      for (const socket of sockets) socket.destroy();
    },
  };
  try {
    let nextClient = 0;
    await Promise.all(
      Array.from(
        { length: Math.min(options.connectConcurrency ?? 50, options.count) },
        async () => {
          while (nextClient < options.count) {
            await connect(nextClient++);
            pool.connected++;
          }
        },
      ),
    );
  } catch (error) {
    pool.close();
    throw error;
  }
  return pool;
}

export type RawStreamPool = {
  connected: number;
  /** streams the server ended while the pool was open (each one a failure of the run) */
  ended: () => number;
  close: () => void;
};

/** An SSE body, de-chunked when the response is chunked, cut into messages (blank-line ended). */
class SseBody {
  chunked = false;
  private raw = ""; // chunked framing not yet decoded
  private left = 0; // data bytes left in the current chunk; -1: a CRLF is due before the next size
  private text = ""; // decoded, not yet a whole message

  constructor(private readonly onMessage: (block: string, receivedAt: number) => void) {}

  feed(data: string, receivedAt: number): void {
    if (!this.chunked) return this.messages(data, receivedAt);
    this.raw = this.raw.length === 0 ? data : this.raw + data;
    for (;;) {
      if (this.left > 0) {
        const take = Math.min(this.left, this.raw.length);
        if (take === 0) return;
        this.messages(this.raw.slice(0, take), receivedAt);
        this.raw = this.raw.slice(take);
        this.left -= take;
        if (this.left > 0) return;
        this.left = -1;
      }
      if (this.left === -1) {
        if (this.raw.length < 2) return;
        this.raw = this.raw.slice(2);
        this.left = 0;
      }
      const eol = this.raw.indexOf("\r\n");
      if (eol < 0) return;
      const size = parseInt(this.raw.slice(0, eol), 16);
      this.raw = this.raw.slice(eol + 2);
      if (!(size > 0)) return; // the last chunk: the server ended the stream
      this.left = size;
    }
  }

  private messages(data: string, receivedAt: number) {
    this.text = this.text.length === 0 ? data : this.text + data;
    let end: number;
    while ((end = this.text.indexOf("\n\n")) >= 0) {
      const block = this.text.slice(0, end);
      this.text = this.text.slice(end + 2);
      if (block.charCodeAt(0) !== 58 /* ':' a comment */) this.onMessage(block, receivedAt);
    }
  }
}

/* ------------------------------------------------------------------ pacing */

/**
 * Open loop: calls `fire(i)` at `start + i / rate` whatever the responses do, `total` times, or
 * until `stop()` says the target has fallen too far behind. Resolves with how late each firing
 * was against its schedule (one entry per firing).
 */
export function openLoop(
  rate: number,
  total: number,
  fire: (i: number) => void,
  stop: () => boolean = () => false,
): Promise<number[]> {
  const interval = 1000 / rate;
  const lateness: number[] = [];
  const start = now();
  let i = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const t = now();
      while (i < total && start + i * interval <= t) {
        if (stop()) return resolve(lateness);
        lateness.push(t - (start + i * interval));
        fire(i++);
      }
      if (i >= total) return resolve(lateness);
      setTimeout(tick, Math.max(0, start + i * interval - now()));
    };
    tick();
  });
}

export type ClosedLoopResult = {
  /** requests sent after the warm-up and answered before the end */
  measured: HttpResult[];
  measuredMs: number;
  /** `send` ran out of work before the end (the window then ends at the last answer) */
  exhausted: boolean;
  cpu: CpuShare;
  /** CPU ms of each of `otherPids` over the measured window */
  otherCpuMs: number[];
};

/**
 * Closed loop: `clients` workers, each sending its next request as soon as its last one answered,
 * for `warmupMs` and then `durationMs`: the throughput a server sustains at that concurrency.
 * `send(client)` returns null when there is nothing left to send (seeded work used up).
 */
export async function closedLoop(options: {
  clients: number;
  warmupMs: number;
  durationMs: number;
  serverPids: (number | undefined)[];
  /** processes whose CPU is reported apart from the servers' (a database server) */
  otherPids?: (number | undefined)[];
  send: (client: number) => Promise<HttpResult> | null;
}): Promise<ClosedLoopResult> {
  let exhaustedAt: number | null = null;
  const measureFrom = now() + options.warmupMs;
  const end = measureFrom + options.durationMs;
  const measured: HttpResult[] = [];
  const meters = () => ({
    servers: cpuMeter(options.serverPids),
    others: (options.otherPids ?? []).map((pid) => cpuMeter(pid)),
  });
  let cpu = meters();
  const startCpu = setTimeout(() => (cpu = meters()), options.warmupMs);
  const worker = async (client: number) => {
    while (now() < end) {
      const sent = options.send(client);
      if (!sent) {
        exhaustedAt ??= now();
        return;
      }
      const result = await sent;
      if (result.sentAt >= measureFrom && result.doneAt <= end) measured.push(result);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.clients }, (_, client) => worker(client)));
  } finally {
    clearTimeout(startCpu);
  }
  const cpuShare = cpu.servers();
  const otherCpuMs = cpu.others.map((meter) => meter().serverMs);
  const lastDone = measured.reduce((latest, r) => Math.max(latest, r.doneAt), measureFrom + 1);
  const windowEnd = exhaustedAt !== null ? Math.min(end, lastDone) : end;
  return {
    measured,
    measuredMs: windowEnd - measureFrom,
    exhausted: exhaustedAt !== null,
    cpu: cpuShare,
    otherCpuMs,
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until the server process is nearly idle (a backlog from the last load has drained). */
export async function waitIdle(pid: number | undefined, maxMs: number): Promise<void> {
  if (pid === undefined) return;
  const deadline = now() + maxMs;
  while (now() < deadline) {
    const before = processTicks(pid);
    await sleep(300);
    const after = processTicks(pid);
    if (!before || !after || (after.ticks - before.ticks) * TICK_MS < 0.15 * 300) return;
  }
}

/** Polls `done` every 10 ms until it is true or `timeoutMs` passes; returns whether it got there. */
export async function until(done: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = now() + timeoutMs;
  while (!done()) {
    if (now() > deadline) return false;
    await sleep(10);
  }
  return true;
}

/* ------------------------------------------------------------------ statistics */

/** Nearest-rank percentile (p in 0..100) of unsorted samples; NaN when there are none. */
export function percentile(samples: ArrayLike<number>, p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = Float64Array.from(samples).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export type Summary = { n: number; p50: number; p99: number; max: number };

export function summarize(samples: ArrayLike<number>): Summary {
  if (samples.length === 0) return { n: 0, p50: NaN, p99: NaN, max: NaN };
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number) =>
    sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
  return { n: sorted.length, p50: at(50), p99: at(99), max: sorted[sorted.length - 1]! };
}

/* ------------------------------------------------------------------ memory */

/** The resident set of `pid` in KiB (VmRSS in /proc/<pid>/status), or NaN off Linux. */
export function rssKiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFile(`/proc/${pid}/status`) ?? "");
  return match ? Number(match[1]) : NaN;
}

/**
 * The server's RSS once it has settled: waits until it is idle, then takes the median of a few
 * readings (a single one can land on a moment between a burst of allocation and its collection).
 */
export async function settledRssKiB(pid: number | undefined): Promise<number> {
  await waitIdle(pid, 20_000);
  const readings: number[] = [];
  for (let i = 0; i < 5; i++) {
    await sleep(400);
    readings.push(rssKiB(pid));
  }
  return percentile(readings, 50);
}

/* ------------------------------------------------------------------ CPU accounting */

// The bench shares its cores with whatever else runs on the machine. To tell a slow server from
// a busy machine, each scenario records how much CPU this process tree used and how much went to
// everything else (Linux /proc; zeros elsewhere).

type CpuTicks = { total: number; idle: number; ours: number };

function readFile(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** CPU time `pid` has used so far (utime + stime, in 10 ms ticks), in ms; NaN when it is gone. */
export function processCpuMs(pid: number | undefined): number {
  const used = pid === undefined ? null : processTicks(pid);
  return used ? used.ticks * TICK_MS : NaN;
}

/** utime + stime of `pid`, and its parent pid. */
function processTicks(pid: number): { ticks: number; ppid: number } | null {
  const stat = readFile(`/proc/${pid}/stat`);
  if (!stat) return null;
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

function sampleCpu(): CpuTicks | null {
  const line = readFile("/proc/stat")?.split("\n")[0];
  if (!line?.startsWith("cpu ")) return null;
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = values[3]! + values[4]!;
  // this process and every descendant (the servers it started)
  const all = new Map<number, { ticks: number; ppid: number }>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const info = processTicks(Number(name));
    if (info) all.set(Number(name), info);
  }
  const ours = new Set([process.pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, info] of all) {
      if (!ours.has(pid) && ours.has(info.ppid)) {
        ours.add(pid);
        grew = true;
      }
    }
  }
  let oursTicks = 0;
  for (const pid of ours) oursTicks += all.get(pid)?.ticks ?? 0;
  return { total, idle, ours: oursTicks };
}

export type CpuShare = {
  /** shares of the whole machine (100% = all cores): this process tree, everything else */
  oursPct: number;
  otherPct: number;
  /** CPU time the server process used, in ms (robust to a busy machine, unlike latency) */
  serverMs: number;
};

const TICK_MS = 10; // USER_HZ = 100 on Linux

/**
 * Starts measuring; the returned function gives the CPU used since then. Several server pids
 * (app instances sharing one database) are added up.
 */
export function cpuMeter(serverPid?: number | (number | undefined)[]): () => CpuShare {
  const pids = (Array.isArray(serverPid) ? serverPid : [serverPid]).filter(
    (pid): pid is number => pid !== undefined,
  );
  const serverTicks = () => {
    let ticks = 0;
    for (const pid of pids) {
      const info = processTicks(pid);
      if (!info) return null;
      ticks += info.ticks;
    }
    return pids.length ? ticks : null;
  };
  const start = sampleCpu();
  const serverStart = serverTicks();
  return () => {
    const end = sampleCpu();
    const serverEnd = serverTicks();
    const serverMs =
      serverStart !== null && serverEnd !== null ? (serverEnd - serverStart) * TICK_MS : NaN;
    if (!start || !end || end.total <= start.total)
      return { oursPct: NaN, otherPct: NaN, serverMs };
    const total = end.total - start.total;
    const busy = total - (end.idle - start.idle);
    // exited processes drop out of `ours`; clamp rather than report a negative share
    const ours = Math.max(0, Math.min(busy, end.ours - start.ours));
    return { oursPct: (100 * ours) / total, otherPct: (100 * (busy - ours)) / total, serverMs };
  };
}

/** Where the wall-clock time of a process's main thread went, in ms per second of wall time. */
export type ThreadTime = {
  /** on a CPU */
  runningMs: number;
  /** runnable, waiting for a CPU the machine's other processes held (the run queue) */
  waitingForCpuMs: number;
  /** neither: asleep in the event loop's poll (no work), or blocked (a synchronous fsync, the disk) */
  asleepMs: number;
};

/**
 * Meters a process's main thread from /proc/<pid>/task/<pid>/schedstat (time on a CPU, time
 * runnable on a run queue): tells a server starved of CPU by the machine from one that waits on
 * something (a lock, the disk) from one that has nothing to do. NaN where /proc is not there.
 */
export function threadMeter(pid: number | undefined): () => ThreadTime {
  const read = (): [number, number] | null => {
    if (pid === undefined) return null;
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8")
        .trim()
        .split(/\s+/)
        .map(Number);
      return [run! / 1e6, wait! / 1e6];
    } catch {
      return null;
    }
  };
  const start = read();
  const startedAt = now();
  return () => {
    const end = read();
    const seconds = (now() - startedAt) / 1000;
    if (!start || !end || seconds <= 0)
      return { runningMs: NaN, waitingForCpuMs: NaN, asleepMs: NaN };
    const runningMs = (end[0] - start[0]) / seconds;
    const waitingForCpuMs = (end[1] - start[1]) / seconds;
    return {
      runningMs,
      waitingForCpuMs,
      asleepMs: Math.max(0, 1000 - runningMs - waitingForCpuMs),
    };
  };
}
