import {
  cpuMeter,
  keepAliveAgent,
  now,
  sleep,
  summarize,
  request,
  waitIdle,
  type CpuShare,
  type HttpResult,
  type Summary,
} from "./load";
import type { PendingCall, Target } from "./targets";

// Contention: many reviewers deciding the same few hot calls at once, each with the revision it
// read, as when a whole team sees the same card appear. One decision per call may win; every
// other answer must be a 409 with the current state. Measures the winners and the conflict
// answers per second, and then checks the database: exactly one decision event per call decided.

const log = (message: string) => console.error(message);

export type ContentionOptions = {
  /** distinct reviewer tokens, all members of the calls' queue */
  reviewers: number;
  /** requests in flight at once (keep-alive connections) */
  concurrency: number;
  /** calls decided at the same time: every reviewer decides each of them once */
  hotCalls: number;
  seed: number;
  warmupMs: number;
  durationMs: number;
};

export type ContentionResult = ContentionOptions & {
  seeded: number;
  /** calls that got at least one decision attempt */
  attempted: number;
  /** 200 answers per second in the measured window (each one a call decided) */
  decidedPerSecond: number;
  /** 409 already_decided / stale_revision answers per second in the measured window */
  conflictsPerSecond: number;
  latency: Summary;
  /** answers in the measured window by status and error code ("409 already_decided") */
  answers: Record<string, number>;
  measuredMs: number;
  exhausted: boolean;
  cpu: CpuShare;
  /** attempted calls with not exactly one 200 answer, or not exactly one decision event */
  wrongWinners: number;
  wrongEvents: number;
  /** calls never attempted that have a decision event anyway */
  phantomEvents: number;
};

const CONFLICT_CODES = new Set(["already_decided", "stale_revision"]);

function answerKey(result: HttpResult): string {
  if (result.status === 0) return `error(${result.error ?? "?"})`;
  if (result.status < 400) return String(result.status);
  try {
    const code = (JSON.parse(result.text) as { error?: { code?: string } }).error?.code;
    return code ? `${result.status} ${code}` : String(result.status);
  } catch {
    return String(result.status);
  }
}

export async function contentionScenario(
  target: Target,
  options: ContentionOptions,
): Promise<ContentionResult> {
  log(
    `  ${target.name}: contention: ${options.reviewers} reviewers, seeding ${options.seed} pending calls…`,
  );
  const tokens = await target.reviewerTokens(options.reviewers);
  const pool: PendingCall[] = await target.seedPendingCalls(options.seed);
  await sleep(300);
  await waitIdle(target.pid, 20_000);
  log(
    `  ${target.name}:   ${options.concurrency} in flight over ${options.hotCalls} hot calls at a time; ${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured`,
  );

  // The attempts in order: the calls in groups of `hotCalls`, and within a group every reviewer
  // on every call, interleaved, so each hot call sees about concurrency / hotCalls deciders at once.
  const perGroup = options.hotCalls * options.reviewers;
  const attemptAt = (n: number) => {
    const group = Math.floor(n / perGroup);
    const within = n % perGroup;
    const call = pool[group * options.hotCalls + (within % options.hotCalls)];
    return call && { call, reviewer: Math.floor(within / options.hotCalls) };
  };

  const agent = keepAliveAgent(options.concurrency);
  const winners = new Map<string, number>(); // callId → 200 answers
  const measured: HttpResult[] = [];
  const unexpected: string[] = [];
  let next = 0;
  let exhaustedAt: number | null = null;
  const start = now();
  const measureFrom = start + options.warmupMs;
  const end = measureFrom + options.durationMs;
  let cpu = cpuMeter(target.pid);
  const startCpu = setTimeout(() => (cpu = cpuMeter(target.pid)), options.warmupMs);
  const worker = async () => {
    while (now() < end) {
      const attempt = attemptAt(next++);
      if (!attempt) {
        exhaustedAt ??= now();
        return;
      }
      const { call, reviewer } = attempt;
      winners.set(call.callId, winners.get(call.callId) ?? 0);
      const result = await request(target.endpoint, agent, {
        method: "POST",
        path: `/api/v1/calls/${call.callId}/decision`,
        token: tokens[reviewer]!,
        body:
          reviewer % 2 === 0
            ? { outcome: "approve", expectedRevision: call.revision }
            : { outcome: "reject", expectedRevision: call.revision, reason: "Not this one." },
      });
      if (result.status === 200) winners.set(call.callId, winners.get(call.callId)! + 1);
      else if (result.status !== 409 && unexpected.length < 5)
        unexpected.push(`HTTP ${result.status} ${result.error ?? result.text.slice(0, 200)}`);
      if (result.sentAt >= measureFrom && result.doneAt <= end) measured.push(result);
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    clearTimeout(startCpu);
    agent.destroy();
  }
  const cpuShare = cpu();
  const lastDone = measured.reduce((latest, r) => Math.max(latest, r.doneAt), measureFrom + 1);
  const measuredMs = (exhaustedAt !== null ? Math.min(end, lastDone) : end) - measureFrom;
  const answers: Record<string, number> = {};
  let decided = 0;
  let conflicts = 0;
  for (const r of measured) {
    const key = answerKey(r);
    answers[key] = (answers[key] ?? 0) + 1;
    if (r.status === 200) decided++;
    else if (r.status === 409 && CONFLICT_CODES.has(key.slice(4))) conflicts++;
  }
  if (unexpected.length > 0)
    log(`  ! ${target.name}: unexpected answers: ${unexpected.join("; ")}`);

  // The database's word: one decision event per attempted call, none for the others.
  const events = await target.decisionEventCounts(pool.map((c) => c.callId));
  let wrongWinners = 0;
  let wrongEvents = 0;
  let phantomEvents = 0;
  for (const call of pool) {
    const won = winners.get(call.callId);
    const count = events.get(call.callId) ?? 0;
    if (won === undefined) {
      if (count > 0) phantomEvents++;
      continue;
    }
    if (won !== 1) wrongWinners++;
    if (count !== 1) wrongEvents++;
  }
  return {
    ...options,
    seeded: pool.length,
    attempted: winners.size,
    decidedPerSecond: decided / (measuredMs / 1000),
    conflictsPerSecond: conflicts / (measuredMs / 1000),
    latency: summarize(measured.map((r) => r.doneAt - r.sentAt)),
    answers,
    measuredMs,
    exhausted: exhaustedAt !== null,
    cpu: cpuShare,
    wrongWinners,
    wrongEvents,
    phantomEvents,
  };
}

/* ------------------------------------------------------------------ the report */

const ms = (x: number) => (Number.isNaN(x) ? "–" : x < 10 ? x.toFixed(1) : x.toFixed(0));
const pair = (s: Summary | undefined) => (s ? `${ms(s.p50)} / ${ms(s.p99)} ms` : "–");
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || !Number.isFinite(a / b) ? "–" : `${(a / b).toFixed(1)}×`;
const int = (x: number) => Math.round(x).toLocaleString("en-US");
/** a rate, with a decimal when it is small (a slow target decides a handful of calls a second) */
const perSecond = (x: number) => `${x < 10 ? x.toFixed(1) : int(x)}/s`;
const verdict = (met: boolean | undefined) =>
  met === undefined ? "" : met ? " — met" : " — **missed**";
const oneWinner = (r: ContentionResult) =>
  r.wrongWinners === 0 && r.wrongEvents === 0 && r.phantomEvents === 0;

export function contentionReport(
  cs: ContentionResult | undefined,
  floor: ContentionResult | undefined,
): string[] {
  const lines: string[] = [];
  const row = (cells: string[]) => lines.push(`| ${cells.join(" | ")} |`);
  const any = cs ?? floor;
  const load = any
    ? `${any.reviewers} reviewers, ${any.concurrency} in flight, ${any.hotCalls} hot calls`
    : "";
  row(["measurement", "load", "Countersign", "floor", "Countersign / floor", "goal"]);
  row(["---", "---", "---:", "---:", "---:", "---"]);
  row([
    "calls decided/s (200s)",
    load,
    cs ? perSecond(cs.decidedPerSecond) : "–",
    floor ? perSecond(floor.decidedPerSecond) : "–",
    ratio(cs?.decidedPerSecond, floor?.decidedPerSecond),
    "",
  ]);
  row([
    "conflict answers/s (409 already_decided / stale_revision)",
    load,
    cs ? perSecond(cs.conflictsPerSecond) : "–",
    floor ? perSecond(floor.conflictsPerSecond) : "–",
    ratio(cs?.conflictsPerSecond, floor?.conflictsPerSecond),
    "",
  ]);
  row([
    "answer latency (200 and 409), p50 / p99",
    load,
    pair(cs?.latency),
    pair(floor?.latency),
    cs && floor
      ? `${ratio(cs.latency.p50, floor.latency.p50)} / ${ratio(cs.latency.p99, floor.latency.p99)}`
      : "–",
    "",
  ]);
  const check = (r: ContentionResult | undefined) =>
    r
      ? oneWinner(r)
        ? `${int(r.attempted)} of ${int(r.attempted)}`
        : `**${r.wrongWinners} calls without exactly one 200, ${r.wrongEvents} without exactly one event, ${r.phantomEvents} undecided calls with one**`
      : "–";
  row([
    "calls with exactly one winner (one 200 and one `call.decided` event in the database)",
    load,
    check(cs),
    check(floor),
    "",
    `all${verdict(cs ? oneWinner(cs) : undefined)}`,
  ]);
  lines.push("", "#### Contention details", "");
  row([
    "target",
    "measured",
    "answers",
    "calls attempted / seeded",
    "CPU bench / other",
    "server CPU / answer",
  ]);
  row(["---", "---:", "---", "---:", "---:", "---:"]);
  for (const [name, r] of [
    ["Countersign", cs],
    ["floor", floor],
  ] as const) {
    if (!r) continue;
    const total = Object.values(r.answers).reduce((a, b) => a + b, 0);
    row([
      name,
      `${(r.measuredMs / 1000).toFixed(1)} s${r.exhausted ? ", ran out of seeded calls" : ""}`,
      Object.entries(r.answers)
        .map(([k, v]) => `${k}×${int(v)}`)
        .join(", "),
      `${int(r.attempted)} / ${int(r.seeded)}`,
      Number.isNaN(r.cpu.oursPct)
        ? "–"
        : `${r.cpu.oursPct.toFixed(0)}% / ${r.cpu.otherPct.toFixed(0)}%`,
      Number.isNaN(r.cpu.serverMs) || total === 0
        ? "–"
        : `${(r.cpu.serverMs / total).toFixed(2)} ms`,
    ]);
  }
  lines.push(
    "",
    "- Contention: every seeded call is decided by every reviewer (distinct reviewer tokens, all members of the queue; even ones approve, odd ones reject with a reason), each sending the revision it read, a few calls at a time so each hot call has about in-flight / hot-calls decisions racing on it. Afterwards every call that got an attempt must have exactly one 200 among its answers and exactly one `call.decided` event in the database, and the others none. Floor: the same CAS (`UPDATE … WHERE status = 'pending' AND revision = ? RETURNING` + the event INSERT, one transaction), 409 with the current row when it updates nothing.",
  );
  return lines;
}
