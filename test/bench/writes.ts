import type { Agent } from "node:http";
import {
  closedLoop,
  cpuMeter,
  keepAliveAgent,
  request,
  summarize,
  waitIdle,
  type CpuShare,
  type HttpResult,
  type Summary,
} from "./load";
import { countStatuses, decide } from "./scenarios";
import type { SqldResult } from "./sqld";
import { pauseBody, type PendingCall, type Target } from "./targets";

// The cost of the two hot writes, pause (POST /api/v1/runs with a one-call batch) and decision
// (POST /api/v1/calls/{id}/decision), measured two ways on any target: one request at a time,
// for the server's CPU per request without queueing, and a closed loop of clients, for the
// throughput it sustains. Written against `Target[]` so that the same code drives the floor, the
// app over its embedded file, and one or two app instances over a libSQL server (sqld.ts).

const log = (message: string) => console.error(message);

export type WriteKind = "pause" | "decision";
export const WRITE_KINDS: WriteKind[] = ["pause", "decision"];
/** the status a write answers when it did its work */
const SUCCESS: Record<WriteKind, number> = { pause: 201, decision: 200 };

export type WriteOptions = {
  /** requests sent one at a time, for CPU per request */
  sequential: number;
  /** closed-loop clients, for throughput */
  clients: number;
  warmupMs: number;
  durationMs: number;
  /** pending calls seeded for the closed-loop decisions (running out only shortens the window) */
  seed: number;
};

export type WriteMeasurement = {
  kind: WriteKind;
  /** requests measured (every status), and those that did their work */
  requests: number;
  ok: number;
  latency: Summary;
  statuses: Record<string, number>;
  /** the app server process(es) */
  cpu: CpuShare;
  /** CPU ms of each of `otherPids` (a libSQL server) over the same window */
  otherCpuMs: number[];
};

export type Throughput = WriteMeasurement & {
  clients: number;
  instances: number;
  perSecond: number;
  measuredMs: number;
  exhausted: boolean;
};

export type WriteResult = {
  sequential: Record<WriteKind, WriteMeasurement>;
  closedLoop: Record<WriteKind, Throughput>;
};

/** Hooks around each request of the one-at-a-time run (the counting proxy's windows). */
export type RequestHooks = { start: () => void; open: () => void; close: () => void };

function pause(target: Target, agent: Agent, token: string): Promise<HttpResult> {
  return request(target.endpoint, agent, {
    method: "POST",
    path: "/api/v1/runs",
    token: target.agentKey,
    body: pauseBody(token),
  });
}

const uniqueLabel = (kind: string) => `${kind}-${Date.now().toString(36)}`;

/** writes of the same kind sent, unmeasured, right before the measured ones */
const SEQUENTIAL_WARMUP = 100;

/** `n` writes one after another on one target: its CPU per request, nothing queued. */
export async function sequentialWrites(
  target: Target,
  kind: WriteKind,
  n: number,
  options: { hooks?: RequestHooks; otherPids?: (number | undefined)[] } = {},
): Promise<WriteMeasurement> {
  log(`  ${target.name}: ${n} ${kind}s one at a time…`);
  // Each target is measured right after writes of its own: a server left without requests for
  // half a minute (while the other target ran its scenarios) costs more per request for a while,
  // the floor and Countersign alike (test/bench/README.md, "Per-request CPU, one at a time").
  const warm = Math.min(SEQUENTIAL_WARMUP, n);
  const pending = kind === "decision" ? await target.seedPendingCalls(warm + n) : [];
  await waitIdle(target.pid, 20_000);
  const agent = keepAliveAgent(1);
  const label = uniqueLabel(`seq-${kind}`);
  const write = (i: number) =>
    kind === "pause" ? pause(target, agent, `${label}-${i}`) : decide(target, agent, pending[i]!);
  const results: HttpResult[] = [];
  try {
    for (let i = 0; i < warm; i++) await write(i);
    options.hooks?.start();
    const cpu = cpuMeter(target.pid);
    const others = (options.otherPids ?? []).map((pid) => cpuMeter(pid));
    for (let i = warm; i < warm + n; i++) {
      options.hooks?.open();
      results.push(await write(i));
      options.hooks?.close();
    }
    return {
      kind,
      requests: results.length,
      ok: results.filter((r) => r.status === SUCCESS[kind]).length,
      latency: summarize(results.map((r) => r.doneAt - r.sentAt)),
      statuses: countStatuses(results),
      cpu: cpu(),
      otherCpuMs: others.map((meter) => meter().serverMs),
    };
  } finally {
    agent.destroy();
  }
}

/**
 * A closed loop of `clients` over one or more instances of the same app and database: client i
 * talks to instance i mod n, all with the first instance's credentials (any instance serves any
 * team). Server CPU is that of every instance together.
 */
export async function closedLoopWrites(
  targets: Target[],
  kind: WriteKind,
  options: Omit<WriteOptions, "sequential">,
  otherPids: (number | undefined)[] = [],
): Promise<Throughput> {
  const first = targets[0]!;
  const name = targets.length > 1 ? `${first.name} ×${targets.length}` : first.name;
  const pending: PendingCall[] = [];
  if (kind === "decision") {
    log(`  ${name}: seeding ${options.seed} pending calls…`);
    pending.push(...(await first.seedPendingCalls(options.seed)));
  }
  for (const target of targets) await waitIdle(target.pid, 20_000);
  log(
    `  ${name}: ${kind}s, closed loop of ${options.clients} clients; ${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured`,
  );
  const via = targets.map((t) => ({
    ...t,
    agentKey: first.agentKey,
    reviewerToken: first.reviewerToken,
  }));
  const agent = keepAliveAgent(options.clients);
  const label = uniqueLabel(`loop-${kind}`);
  let next = 0;
  let loop: Awaited<ReturnType<typeof closedLoop>>;
  try {
    loop = await closedLoop({
      clients: options.clients,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      serverPids: targets.map((t) => t.pid),
      otherPids,
      send: (client) => {
        const target = via[client % via.length]!;
        if (kind === "pause") return pause(target, agent, `${label}-${next++}`);
        const call = pending[next++];
        return call ? decide(target, agent, call) : null;
      },
    });
  } finally {
    agent.destroy();
  }
  const ok = loop.measured.filter((r) => r.status === SUCCESS[kind]);
  return {
    kind,
    clients: options.clients,
    instances: targets.length,
    requests: loop.measured.length,
    ok: ok.length,
    perSecond: ok.length / (loop.measuredMs / 1000),
    latency: summarize(ok.map((r) => r.doneAt - r.sentAt)),
    statuses: countStatuses(loop.measured),
    measuredMs: loop.measuredMs,
    exhausted: loop.exhausted,
    cpu: loop.cpu,
    otherCpuMs: loop.otherCpuMs,
  };
}

/** Both measurements for both writes on one target (the `writes` scenario). */
export async function writesScenario(target: Target, options: WriteOptions): Promise<WriteResult> {
  const sequential = {
    pause: await sequentialWrites(target, "pause", options.sequential),
    decision: await sequentialWrites(target, "decision", options.sequential),
  };
  const closedLoop = {
    pause: await closedLoopWrites([target], "pause", options),
    decision: await closedLoopWrites([target], "decision", options),
  };
  return { sequential, closedLoop };
}

/* ------------------------------------------------------------------ report helpers */

/** server CPU ms per request, or NaN */
export const cpuPerRequest = (m: WriteMeasurement | undefined) =>
  m && m.requests > 0 ? m.cpu.serverMs / m.requests : NaN;

/** The figures of `writes` (floor, embedded file) and `sqld` (one and two instances), side by side. */
export function writesReport(
  columns: { floor?: WriteResult; embedded?: WriteResult; sqld?: SqldResult },
  options: { sequential: number; clients: number },
): string[] {
  const { floor, embedded, sqld } = columns;
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`| ${cells.join(" | ")} |`);
  const num = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  const msCell = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : "–");
  const rate = (t: Throughput | undefined) =>
    t ? `${Math.round(t.perSecond)}/s${t.exhausted ? " (ran out of seeded calls)" : ""}` : "–";
  const latency = (t: Throughput | undefined) =>
    t && t.latency.n ? `${num(t.latency.p50, 0)} / ${num(t.latency.p99, 0)} ms` : "–";
  const verdict = (met: boolean | undefined) =>
    met === undefined ? "" : met ? " — met" : " — **missed**";
  const sqldPerRequest = (m: WriteMeasurement | undefined) =>
    m && m.requests > 0 ? (m.otherCpuMs[0] ?? NaN) / m.requests : NaN;
  const trips = (kind: WriteKind) => {
    const r = sqld?.roundTrips[kind];
    if (!r) return "–";
    const spread = (s: { mean: number; min: number; max: number }) =>
      s.min === s.max ? num(s.mean) : `${num(s.mean)} (${s.min}–${s.max})`;
    return `${spread(r.perRequest)}, ${spread(r.inWriteLockPerRequest)} in the write lock`;
  };
  const tripsMet = (kind: WriteKind) => {
    const r = sqld?.roundTrips[kind];
    return r
      ? r.perRequest.max <= 3 &&
          r.inWriteLockPerRequest.min === 1 &&
          r.inWriteLockPerRequest.max === 1
      : undefined;
  };
  const ratio = (kind: WriteKind) =>
    sqld ? sqld.two[kind].perSecond / sqld.one.closedLoop[kind].perSecond : NaN;

  lines.push("### Writes: cost per request and sustained throughput", "");
  row([
    "measurement",
    "floor (embedded file)",
    "Countersign, embedded file",
    "Countersign over sqld, 1 instance",
    "over sqld, 2 instances (uncapped: measures this machine)",
    "goal",
  ]);
  row(["---", "---:", "---:", "---:", "---:", "---"]);
  for (const kind of WRITE_KINDS) {
    const cpu = (r: WriteResult | undefined) => msCell(cpuPerRequest(r?.sequential[kind]));
    const embeddedCpu = cpuPerRequest(embedded?.sequential[kind]);
    row([
      `server CPU per ${kind}, ${options.sequential} one at a time`,
      cpu(floor),
      cpu(embedded),
      cpu(sqld?.one),
      "",
      `embedded ≤ 1.5 ms${verdict(embedded ? embeddedCpu <= 1.5 : undefined)}`,
    ]);
  }
  for (const kind of WRITE_KINDS) {
    const loop = (r: WriteResult | undefined) => r?.closedLoop[kind];
    const two = sqld?.two[kind];
    const goals = [
      `embedded ≥ 600/s${verdict(embedded ? embedded.closedLoop[kind].perSecond >= 600 : undefined)}`,
    ];
    if (kind === "pause")
      goals.push(`sqld ≥ 300/s${verdict(two ? two.perSecond >= 300 : undefined)}`);
    row([
      `${kind}s/s, closed loop of ${options.clients} clients`,
      rate(loop(floor)),
      rate(loop(embedded)),
      rate(loop(sqld?.one)),
      two ? `${rate(two)} (${num(ratio(kind))}× one)` : "–",
      goals.join("; "),
    ]);
  }
  row([
    "two instances / one (pauses, decisions)",
    "",
    "",
    "",
    sqld ? `${num(ratio("pause"))}×, ${num(ratio("decision"))}×` : "–",
    `≥ 1.5×${verdict(sqld ? ratio("pause") >= 1.5 && ratio("decision") >= 1.5 : undefined)}`,
  ]);
  for (const kind of WRITE_KINDS) {
    row([
      `database round trips per ${kind} (HTTP requests to sqld, one at a time)`,
      "",
      "",
      trips(kind),
      "",
      `≤ 3, exactly 1 in the write lock${verdict(tripsMet(kind))}`,
    ]);
  }
  for (const kind of WRITE_KINDS) {
    const loop = (r: WriteResult | undefined) => r?.closedLoop[kind];
    row([
      `${kind} latency at ${options.clients} clients, p50 / p99`,
      latency(loop(floor)),
      latency(loop(embedded)),
      latency(loop(sqld?.one)),
      latency(sqld?.two[kind]),
      "",
    ]);
  }
  for (const kind of WRITE_KINDS) {
    const loopCpu = (t: Throughput | undefined) => msCell(cpuPerRequest(t));
    row([
      `server CPU per ${kind} at ${options.clients} clients (all instances)`,
      loopCpu(floor?.closedLoop[kind]),
      loopCpu(embedded?.closedLoop[kind]),
      loopCpu(sqld?.one.closedLoop[kind]),
      loopCpu(sqld?.two[kind]),
      "",
    ]);
  }
  if (sqld)
    for (const kind of WRITE_KINDS)
      row([
        `sqld CPU per ${kind}: one at a time / at ${options.clients} clients`,
        "",
        "",
        `${msCell(sqldPerRequest(sqld.one.sequential[kind]))} / ${msCell(sqldPerRequest(sqld.one.closedLoop[kind]))}`,
        msCell(sqldPerRequest(sqld.two[kind])),
        "",
      ]);

  if (sqld) lines.push("", ...scaleOutReport(sqld, options.clients));
  lines.push("");
  const statuses = (m: WriteMeasurement) =>
    Object.entries(m.statuses)
      .map(([k, v]) => `${k}×${v}`)
      .join(", ");
  // a busy machine makes every figure here pessimistic: say how busy it was
  const busyElsewhere = (m: WriteMeasurement) =>
    `machine ${num(m.cpu.oursPct, 0)}% bench, ${num(m.cpu.otherPct, 0)}% other`;
  const details: string[] = [];
  for (const [name, r] of [
    ["floor", floor],
    ["Countersign, embedded", embedded],
    ["Countersign over sqld, 1 instance", sqld?.one],
  ] as const) {
    if (!r) continue;
    const parts = WRITE_KINDS.flatMap((kind) => [
      `${kind}s one at a time ${statuses(r.sequential[kind])}`,
      `${kind}s in the loop ${statuses(r.closedLoop[kind])} in ${num(r.closedLoop[kind].measuredMs / 1000)} s (${busyElsewhere(r.closedLoop[kind])})`,
    ]);
    details.push(`${name}: ${parts.join("; ")}`);
  }
  if (sqld)
    details.push(
      `Countersign over sqld, 2 instances: ${WRITE_KINDS.map((kind) => `${kind}s ${statuses(sqld.two[kind])} in ${num(sqld.two[kind].measuredMs / 1000)} s (${busyElsewhere(sqld.two[kind])})`).join("; ")}`,
    );
  lines.push(
    `- HTTP statuses: ${details.join(". ")}.`,
    `- A pause is \`POST /api/v1/runs\` with a one-call batch (no stream open: its fan-out is not in these figures); a decision is an approval (\`POST /api/v1/calls/{id}/decision\` with expectedRevision) of a seeded pending call. "One at a time": ${options.sequential} requests in sequence over one keep-alive connection, server CPU from /proc/<pid>/stat over them (its background work — event-log polling, sweeper — included). "Closed loop": ${options.clients} clients each sending its next request when the last one answered, after a warm-up; only answers that did the work (201 / 200) count.`,
  );
  if (sqld) {
    const bg = (kind: WriteKind) => num(sqld.roundTrips[kind].backgroundPerRequest);
    const statements = (kind: WriteKind) => num(sqld.roundTrips[kind].statementsPerRequest);
    lines.push(
      `- Over sqld (\`${sqld.version}\`, started by the bench on 127.0.0.1 over a temp dir, migrated over HTTP): the app's \`DATABASE_URL\` is \`http://127.0.0.1:<port>\` (Hrana over HTTP). Round trips are counted by a proxy between the one-at-a-time instance and sqld: the HTTP requests that arrived while an API request was in flight (they carried ${statements("pause")} SQL statements per pause, ${statements("decision")} per decision). "In the write lock": requests that ran while their Hrana stream held SQLite's write lock (from BEGIN IMMEDIATE or a first write to COMMIT/ROLLBACK, followed through the stream's batons) or took it themselves. Not counted: requests shaped like the traffic an idle instance makes (learned while idle: ${num(sqld.backgroundPerSecond)}/s per instance — event-log polls, sweeper, webhooks), which also wake up after each write: ${bg("pause")} per pause, ${bg("decision")} per decision.`,
      "- The throughput instances reach sqld directly (the proxy would take CPU from these same cores) over WebSockets (`ws://`, Hrana over a WebSocket, which is what a `libsql://` URL uses); the one-at-a-time rows above go over HTTP (`http://`), through the proxy. With two, client i talks to instance i mod 2 and server CPU is both instances' together. The floor has no libSQL-server mode: its column is the embedded floor, measured in the same run.",
    );
  }
  return lines;
}

/** The capped scale-out runs of `sqld`: 1, 2 and 4 instances, each held to its own share of a core. */
function scaleOutReport(sqld: SqldResult, clientsPerInstance: number): string[] {
  const capped = sqld.capped;
  if ("unavailable" in capped)
    return [`- Scale-out with capped instances: not run (${capped.unavailable}).`];
  const lines = [
    `### Scale-out over sqld: app instances each capped to ${capped.cores} of a core (a cgroup each)`,
    "",
    "| instances | pauses/s (× one) | decisions/s (× one) | sqld CPU per pause / decision | app CPU per pause / decision (all instances) | sqld CPU per idle second, these instances at rest | cap held back each instance | goal |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
  ];
  const one = capped.runs.find((r) => r.instances === 1);
  const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : "–");
  const per = (t: Throughput, ms: number) => (t.requests > 0 ? ms / t.requests : NaN);
  for (const run of capped.runs) {
    const times = (kind: WriteKind) =>
      one ? run.loops[kind].perSecond / one.loops[kind].perSecond : NaN;
    const target = run.instances === 2 ? 1.8 : run.instances === 4 ? 3.2 : undefined;
    const met =
      target === undefined
        ? ""
        : `≥ ${target}× — ${times("pause") >= target && times("decision") >= target ? "met" : "**missed**"}`;
    const rate = (kind: WriteKind) =>
      `${Math.round(run.loops[kind].perSecond)}/s (${fixed(times(kind), 2)}×)`;
    lines.push(
      `| ${run.instances} | ${rate("pause")} | ${rate("decision")} | ${WRITE_KINDS.map((k) => `${fixed(per(run.loops[k], run.loops[k].otherCpuMs[0] ?? NaN), 2)} ms`).join(" / ")} | ${WRITE_KINDS.map((k) => `${fixed(cpuPerRequest(run.loops[k]), 2)} ms`).join(" / ")} | ${fixed(run.sqldIdleMsPerSecond, 0)} ms/s | ${fixed(run.throttledMsPerSecond, 0)} ms/s | ${met} |`,
    );
  }
  lines.push(
    "",
    `- Each instance is put in a cgroup v1 of its own (\`/sys/fs/cgroup/cpu/countersign-bench-*\`, \`cpu.cfs_quota_us\` = ${capped.cores} × \`cpu.cfs_period_us\`) after its warm-up, and stays there for its runs; the groups are removed at the end (and on Ctrl-C). The closed loop has ${clientsPerInstance} clients per instance (client i → instance i mod n), over WebSockets straight to sqld. "cap held back": the cgroups' \`throttled_time\` during the loops, per instance per second — near 1000 × (1 − cap) ms/s when an instance is CPU-bound at its cap, which is what makes the ratio a measure of the design rather than of this machine. sqld, the load generator and other work on the machine are not capped: if they run out of cores, the ratios fall short for that reason (the "machine … other" figures above say how busy it was).`,
  );
  return lines;
}
