import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";

// `npx tsx test/bench/perf-layers.ts FILE.data [REQUESTS] [--top=N]`: where the server's CPU went
// in a `perf record` that test/bench/request-cpu.ts `--perf=DIR` wrote, by layer of the request
// (SQLite, the libsql client, drizzle, zod, the verbs, the HTTP edge, logging, Node's http…), in
// ms per request when REQUESTS is given. Each sample of the server's main thread goes to the
// innermost frame of its stack that belongs to a layer (a malloc or a kernel write counts for the
// code that called it); V8's helper threads (the optimizing compiler, the GC's helpers) are
// counted apart. The production bundle (dist/server.js) names its modules in `// lib/…` comment
// lines, by which a JavaScript frame's line is mapped back to its source file.
//
// V8's /tmp/perf-<pid>.map (--perf-basic-prof) only ever grows: code freed by the GC leaves its
// line, and new code at the same address adds another, which perf may resolve to the old name (a
// module's start-up code named for a hot function). Before reading, the map is rewritten with the
// newest line winning wherever two overlap (the original kept as .orig): right for code that lives
// through the measured loops, which run last.

type Layer = string;

const [file, requestsArg] = process.argv.slice(2).filter((a) => !a.startsWith("--"));
if (!file) throw new Error("usage: tsx test/bench/perf-layers.ts FILE.data [REQUESTS] [--top=N]");
const requests = Number(requestsArg) || 0;
const top = Number(process.argv.find((a) => a.startsWith("--top="))?.slice(6) ?? 4);

/** Line → source module of the production bundle (esbuild's `// path` comments). */
function bundleModules(path: string): { line: number; module: string }[] {
  const starts: { line: number; module: string }[] = [];
  readFileSync(path, "utf8")
    .split("\n")
    .forEach((text, index) => {
      if (/^\/\/ [\w@./[\]-]+\.tsx?$/.test(text))
        starts.push({ line: index + 1, module: text.slice(3) });
    });
  return starts;
}
const modules = bundleModules("dist/server.js");

function moduleAt(line: number): string {
  let low = 0;
  let high = modules.length - 1;
  let found = "dist/server.js";
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (modules[middle]!.line <= line) {
      found = modules[middle]!.module;
      low = middle + 1;
    } else high = middle - 1;
  }
  return found;
}

/** The layer a source module of the bundle belongs to. */
function layerOfModule(module: string): Layer {
  if (/^lib\/log\//.test(module)) return "log (pino, request line)";
  if (/^lib\/metrics\//.test(module) || module === "db/write-metrics.ts") return "metrics";
  if (
    /^(lib\/http|lib\/auth|app\/api|lib\/contract)\/|^lib\/(json-response|errors)\.ts$/.test(module)
  )
    return "HTTP edge (dispatch, auth, body, answer)";
  if (/^db\//.test(module)) return "db/ (write queue, group commit, statements)";
  return "verbs and read models (lib/)";
}

/** The layer of one stack frame, or null for a frame that only runs for its caller. */
function layerOf(symbol: string, dso: string): Layer | null {
  if (
    /Scavenge|MarkCompact|Heap::|GCTracer|ConcurrentMarking|Sweeper|MinorMC|IncrementalMarking/.test(
      symbol,
    )
  )
    return "GC";
  if (dso.endsWith("index.node")) return "SQLite (libsql's addon)";
  // SQLite's unix VFS (the addon has no frame pointers, so its system calls end the stack)
  if (
    /libc\.so/.test(dso) &&
    /^(fsync|fdatasync|pwrite64|pread64|__libc_pwrite|__libc_pread|fcntl64|__fcntl64_nocancel|__GI___fcntl64_nocancel)$/.test(
      symbol,
    )
  )
    return "SQLite's system calls (file writes, fsync, locks)";
  if (!symbol.startsWith("JS:") && !symbol.startsWith("Eval:")) {
    if (/llhttp|Parser::|StreamBase|LibuvStreamWrap::DoWrite|WriteWrap/.test(symbol))
      return "Node's http and sockets";
    if (/epoll_wait|epoll_pwait|uv__io_poll/.test(symbol)) return "event loop (epoll)";
    if (/compiler::|Compile|Deoptimiz/.test(symbol) && !/CompileLazy/.test(symbol))
      return "V8 compiler (main thread)";
    return null;
  }
  const url = /(\S+):(\d+):\d+/.exec(symbol);
  const where = url?.[1] ?? "";
  if (where.includes("/dist/server.js")) return layerOfModule(moduleAt(Number(url![2])));
  if (where.includes("/.next/")) {
    if (where.includes("drizzle-orm")) return "drizzle";
    return "Next's copy of lib/ (background: tailer, sweeps)";
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1];
  if (pkg) {
    if (pkg === "libsql" || pkg.startsWith("@libsql/")) return "libsql client (JS)";
    if (pkg === "drizzle-orm") return "drizzle";
    if (pkg === "zod") return "zod";
    if (pkg === "pino" || pkg === "@pinojs/redact" || pkg === "sonic-boom" || pkg === "fast-redact")
      return "log (pino, request line)";
    if (pkg === "prom-client") return "metrics";
    if (pkg === "next") return "Next.js";
    return `other packages (${pkg})`;
  }
  if (/undici|webstreams|internal\/(url|abort_controller|event_target)|encoding/.test(where))
    return "web Request/Response (undici)";
  if (/async_hooks/.test(where)) return "async hooks (AsyncLocalStorage)";
  if (/_http_|node:net|node:internal\/(streams|stream_base_commons|net)|node:events/.test(where))
    return "Node's http and sockets";
  if (/node:internal\/(process|timers)|node:timers/.test(where)) return null;
  return `Node internals (${where.replace(/^node:(internal\/)?/, "")})`;
}

/** Rewrites the process's perf map so that, where entries overlap, only the newest remains. */
function newestMapEntries(path: string): void {
  const pid = execFileSync("perf", ["script", "-i", path, "-F", "pid"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  })
    .trim()
    .split(/\s+/, 1)[0];
  const map = `/tmp/perf-${pid}.map`;
  if (!pid || !existsSync(map)) return;
  if (!existsSync(`${map}.orig`)) copyFileSync(map, `${map}.orig`);
  const lines = readFileSync(`${map}.orig`, "utf8").split("\n").filter(Boolean);
  const kept: { start: number; end: number; line: string }[] = []; // sorted by start, disjoint
  for (let i = lines.length - 1; i >= 0; i--) {
    const [startHex, sizeHex] = lines[i]!.split(" ", 2);
    const start = parseInt(startHex!, 16);
    const end = start + parseInt(sizeHex!, 16);
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (kept[middle]!.start < start) low = middle + 1;
      else high = middle;
    }
    const before = kept[low - 1];
    const after = kept[low];
    if ((before && before.end > start) || (after && after.start < end)) continue; // a newer one
    kept.splice(low, 0, { start, end, line: lines[i]! });
  }
  writeFileSync(map, kept.map((entry) => entry.line).join("\n") + "\n");
}

type Sample = { tid: number; frames: { symbol: string; dso: string }[] };

function* samples(path: string): Generator<Sample> {
  const text = execFileSync("perf", ["script", "-i", path, "-F", "tid,ip,sym,dso"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  });
  let current: Sample | null = null;
  for (const line of text.split("\n")) {
    if (!line.trim()) {
      if (current) yield current;
      current = null;
    } else if (!line.startsWith("\t") && !line.startsWith(" ")) {
      current = { tid: Number(line.trim().split(/\s+/)[0]), frames: [] };
    } else if (!current) {
      current = { tid: Number(line.trim().split(/\s+/)[0]), frames: [] };
    } else {
      const match = /^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)$/.exec(line);
      if (match) current.frames.push({ symbol: match[1]!, dso: match[2]! });
    }
  }
  if (current) yield current;
}

newestMapEntries(file);
const all = [...samples(file)];
const byThread = new Map<number, number>();
for (const sample of all) byThread.set(sample.tid, (byThread.get(sample.tid) ?? 0) + 1);
const mainThread = [...byThread].sort((a, b) => b[1] - a[1])[0]![0];
// perf record -F 1999: each sample stands for 1/1999 s of CPU
const msPerSample = 1000 / 1999;

const layers = new Map<Layer, { count: number; frames: Map<string, number> }>();
for (const sample of all) {
  let layer: Layer = "V8 helper threads (optimizing compiler, GC helpers)";
  let frame = "";
  if (sample.tid === mainThread) {
    layer = "unattributed (no stack: malloc, V8 builtins)";
    frame = sample.frames[0]?.symbol ?? "";
    for (const { symbol, dso } of sample.frames) {
      const found = layerOf(symbol, dso);
      if (found) {
        layer = found;
        frame = symbol.replace(/ file:\/\/\/.*\/dist\/server\.js/, " server.js");
        break;
      }
    }
  }
  const entry = layers.get(layer) ?? { count: 0, frames: new Map() };
  entry.count++;
  entry.frames.set(frame, (entry.frames.get(frame) ?? 0) + 1);
  layers.set(layer, entry);
}

const total = all.length;
console.log(
  `${file}: ${total} samples, ${(total * msPerSample).toFixed(0)} ms of CPU` +
    (requests ? `, ${((total * msPerSample) / requests).toFixed(3)} ms per request` : ""),
);
for (const [layer, { count, frames }] of [...layers].sort((a, b) => b[1].count - a[1].count)) {
  const share = `${((100 * count) / total).toFixed(1)}%`.padStart(6);
  const perRequest = requests ? `${((count * msPerSample) / requests).toFixed(3)} ms  ` : "";
  console.log(`${share}  ${perRequest}${layer}`);
  for (const [frame, n] of [...frames].sort((a, b) => b[1] - a[1]).slice(0, top))
    if (frame)
      console.log(
        `          ${((100 * n) / total).toFixed(1).padStart(4)}%  ${frame.slice(0, 110)}`,
      );
}
