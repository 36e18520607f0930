import type { Agent } from "node:http";
import {
  closedLoop,
  cpuMeter,
  keepAliveAgent,
  now,
  openLoop,
  openStreams,
  parseJson,
  request,
  sleep,
  summarize,
  until,
  waitIdle,
  type ClosedLoopResult,
  type CpuShare,
  type HttpResult,
  type Summary,
} from "./load";
import { pauseBody, type PendingCall, type RunResponse, type Target } from "./targets";

// The three measurements, written once against `Target` so the floor and Countersign are driven
// by exactly the same code.

const log = (message: string) => console.error(message);

export function countStatuses(results: HttpResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) {
    const key = r.status === 0 ? `error(${r.error ?? "?"})` : String(r.status);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/* ------------------------------------------------------------------ 1. pause → batch.created */

export type PauseLoad = { clients: number; rate: number };

export type PauseResult = PauseLoad & {
  /** per client per event: from sending the pause to that client receiving its batch.created */
  latency: Summary;
  expected: number;
  delivered: number;
  /** the pause requests' own response times (measured phase) */
  pauseHttp: Summary;
  pauseStatuses: Record<string, number>;
  /** how late the open-loop pacer fired against its schedule: the generator's own saturation */
  lateness: Summary;
  measuredMs: number;
  /** sends skipped because the server was more than a second behind (0 unless overloaded) */
  skipped: number;
  /** pauses answered 201 per second of the measured window */
  answeredPerSecond: number;
  cpu: CpuShare;
};

export async function pauseScenario(
  target: Target,
  load: PauseLoad,
  timing: { warmupMs: number; durationMs: number },
): Promise<PauseResult> {
  const label = `p${load.clients}x${load.rate}-${Date.now().toString(36)}`;
  const sentAt = new Map<string, number>(); // measured pauses only
  const samples: number[] = [];
  log(
    `  ${target.name}: pause → stream, ${load.clients} clients at ${load.rate} pauses/s: connecting…`,
  );
  const pool = await openStreams(target.endpoint, {
    path: "/api/v1/stream",
    token: target.reviewerToken,
    count: load.clients,
    onBatchCreated: (_client, token, receivedAt) => {
      const sent = sentAt.get(token);
      if (sent !== undefined) samples.push(receivedAt - sent);
    },
  });
  const agent = keepAliveAgent(512);
  try {
    await sleep(250);
    const warmCount = Math.round((load.rate * timing.warmupMs) / 1000);
    const measuredCount = Math.round((load.rate * timing.durationMs) / 1000);
    const responses: Promise<HttpResult>[] = [];
    const measuredResponses: Promise<HttpResult>[] = [];
    log(
      `  ${target.name}:   ${load.clients} streams open; ${timing.warmupMs / 1000} s warm-up + ${timing.durationMs / 1000} s measured`,
    );
    // More than a second of pauses unanswered means the server cannot keep up: the generator then
    // skips sends until it catches up, rather than queueing minutes of backlog, and the report
    // says so, with the rate the server did sustain.
    const backlogLimit = Math.max(20, load.rate);
    let inFlight = 0;
    let skipped = 0;
    let measureFrom = now();
    let cpu = cpuMeter(target.pid);
    const lateness = await openLoop(load.rate, warmCount + measuredCount, (i) => {
      const token = `${label}-${i}`;
      if (i === warmCount) {
        measureFrom = now();
        cpu = cpuMeter(target.pid);
      }
      if (inFlight > backlogLimit) {
        if (i >= warmCount) skipped++;
        return;
      }
      if (i >= warmCount) sentAt.set(token, now());
      inFlight++;
      const response = request(target.endpoint, agent, {
        method: "POST",
        path: "/api/v1/runs",
        token: target.agentKey,
        body: pauseBody(token),
      }).finally(() => inFlight--);
      responses.push(response);
      if (i >= warmCount) measuredResponses.push(response);
    });
    const measuredEnd = now();
    const measuredMs = measuredEnd - measureFrom;
    const expected = measuredResponses.length * load.clients;
    await until(() => samples.length >= expected, 10_000);
    const cpuShare = cpu();
    const settled = await Promise.all(responses);
    const measured = await Promise.all(measuredResponses);
    const answered = measured.filter((r) => r.status === 201 && r.doneAt <= measuredEnd).length;
    return {
      ...load,
      latency: summarize(samples),
      expected,
      delivered: samples.length,
      pauseHttp: summarize(measured.map((r) => r.doneAt - r.sentAt)),
      pauseStatuses: countStatuses(settled),
      lateness: summarize(lateness.slice(warmCount)),
      measuredMs,
      skipped,
      answeredPerSecond: measuredMs > 0 ? answered / (measuredMs / 1000) : 0,
      cpu: cpuShare,
    };
  } finally {
    pool.close();
    agent.destroy();
    // let the server notice the closed streams and finish any backlog before the next load
    await sleep(300);
    await waitIdle(target.pid, 20_000);
  }
}

/* ------------------------------------------------------------------ 2. decisions per second */

export type DecisionResult = {
  concurrency: number;
  seeded: number;
  perSecond: number;
  /** 200s in the measured window */
  ok: number;
  latency: Summary;
  statuses: Record<string, number>;
  measuredMs: number;
  exhausted: boolean;
  cpu: CpuShare;
};

export async function decisionScenario(
  target: Target,
  options: { concurrency: number; seed: number; warmupMs: number; durationMs: number },
): Promise<DecisionResult> {
  log(`  ${target.name}: decisions: seeding ${options.seed} pending calls…`);
  const pool: PendingCall[] = await target.seedPendingCalls(options.seed);
  await sleep(300);
  await waitIdle(target.pid, 20_000);
  log(
    `  ${target.name}:   ${options.concurrency} deciders; ${options.warmupMs / 1000} s warm-up + ${options.durationMs / 1000} s measured`,
  );
  const agent = keepAliveAgent(options.concurrency);
  let next = 0;
  let loop: ClosedLoopResult;
  try {
    loop = await closedLoop({
      clients: options.concurrency,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      serverPids: [target.pid],
      send: () => {
        const call = pool[next++];
        return call ? decide(target, agent, call) : null;
      },
    });
  } finally {
    agent.destroy();
  }
  const ok = loop.measured.filter((r) => r.status === 200);
  return {
    concurrency: options.concurrency,
    seeded: pool.length,
    perSecond: ok.length / (loop.measuredMs / 1000),
    ok: ok.length,
    latency: summarize(ok.map((r) => r.doneAt - r.sentAt)),
    statuses: countStatuses(loop.measured),
    measuredMs: loop.measuredMs,
    exhausted: loop.exhausted,
    cpu: loop.cpu,
  };
}

/** One approval of a pending call, at the revision it was seeded with (200, or 409 if raced). */
export function decide(target: Target, agent: Agent, call: PendingCall): Promise<HttpResult> {
  return request(target.endpoint, agent, {
    method: "POST",
    path: `/api/v1/calls/${call.callId}/decision`,
    token: target.reviewerToken,
    body: { outcome: "approve", expectedRevision: call.revision },
  });
}

/* ------------------------------------------------------------------ 3. decision → long-poll wakes */

export type WakeResult = {
  parked: number;
  rate: number;
  /** from sending the decision to the parked GET /batches/{id}?wait=30 answering */
  latency: Summary;
  decisionHttp: Summary;
  /** waiters that answered before their decision, or still pending, or failed */
  failures: number;
  statuses: Record<string, number>;
  cpu: CpuShare;
};

export async function wakeScenario(
  target: Target,
  options: { batches: number; warmup: number; rate: number },
): Promise<WakeResult> {
  const count = options.batches + options.warmup;
  log(`  ${target.name}: long-poll wake-up: creating ${count} pending batches…`);
  const setupAgent = keepAliveAgent(8);
  const created: PendingCall[] = [];
  try {
    let nextIndex = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (nextIndex < count) {
          const i = nextIndex++;
          const run = parseJson<RunResponse>(
            await request(target.endpoint, setupAgent, {
              method: "POST",
              path: "/api/v1/runs",
              token: target.agentKey,
              body: pauseBody(`wake-${Date.now().toString(36)}-${i}`),
            }),
            "creating a batch to wait on",
          );
          const batch = run.batches[0]!;
          created[i] = {
            batchId: batch.id,
            callId: batch.calls[0]!.id,
            revision: batch.calls[0]!.revision,
          };
        }
      }),
    );
  } finally {
    setupAgent.destroy();
  }

  await waitIdle(target.pid, 20_000);
  const waitAgent = keepAliveAgent(count + 16);
  const decideAgent = keepAliveAgent(32);
  try {
    const decidedAt: number[] = [];
    const waiters = created.map((b, i) =>
      request(target.endpoint, waitAgent, {
        method: "GET",
        path: `/api/v1/batches/${b.batchId}?wait=30`,
        token: target.agentKey,
      }).then((result) => ({ result, early: decidedAt[i] === undefined })),
    );
    // Give every long-poll time to reach the server and park.
    await sleep(Math.max(1500, count * 10));
    log(`  ${target.name}:   ${count} long-polls parked; deciding them at ${options.rate}/s`);
    const decisions: Promise<HttpResult>[] = [];
    const cpu = cpuMeter(target.pid);
    await openLoop(options.rate, count, (i) => {
      decidedAt[i] = now();
      decisions.push(
        request(target.endpoint, decideAgent, {
          method: "POST",
          path: `/api/v1/calls/${created[i]!.callId}/decision`,
          token: target.reviewerToken,
          body: { outcome: "approve", expectedRevision: created[i]!.revision },
        }),
      );
    });
    const answered = await Promise.all(waiters);
    const decided = await Promise.all(decisions);
    const cpuShare = cpu();
    const samples: number[] = [];
    let failures = 0;
    answered.forEach(({ result, early }, i) => {
      if (i < options.warmup) return;
      let status: string | undefined;
      try {
        status = (JSON.parse(result.text) as { status?: string }).status;
      } catch {
        // counted as a failure below
      }
      if (early || result.status !== 200 || status === "pending" || status === undefined)
        failures++;
      else samples.push(result.doneAt - decidedAt[i]!);
    });
    return {
      parked: count,
      rate: options.rate,
      latency: summarize(samples),
      decisionHttp: summarize(decided.slice(options.warmup).map((r) => r.doneAt - r.sentAt)),
      failures,
      statuses: countStatuses(decided),
      cpu: cpuShare,
    };
  } finally {
    waitAgent.destroy();
    decideAgent.destroy();
  }
}

/* ------------------------------------------------------------------ warm-up */

/**
 * A few seconds of every request kind the scenarios send (closed loop, a few at a time), so that
 * lazily loaded routes and cold JIT do not land in the first measured load.
 */
export async function warmUp(target: Target, ms: number): Promise<void> {
  log(`  ${target.name}: warming up for ${ms / 1000} s…`);
  const agent = keepAliveAgent(8);
  const pool = await openStreams(target.endpoint, {
    path: "/api/v1/stream",
    token: target.reviewerToken,
    count: 4,
    onBatchCreated: () => undefined,
  });
  const end = now() + ms;
  try {
    await Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let i = 0; now() < end; i++) {
          const run = parseJson<RunResponse>(
            await request(target.endpoint, agent, {
              method: "POST",
              path: "/api/v1/runs",
              token: target.agentKey,
              body: pauseBody(`warm-${worker}-${i}-${Date.now().toString(36)}`),
            }),
            "a warm-up pause",
          );
          const batch = run.batches[0]!;
          const wait = request(target.endpoint, agent, {
            method: "GET",
            path: `/api/v1/batches/${batch.id}?wait=5`,
            token: target.agentKey,
          });
          await request(target.endpoint, agent, {
            method: "POST",
            path: `/api/v1/calls/${batch.calls[0]!.id}/decision`,
            token: target.reviewerToken,
            body: { outcome: "approve", expectedRevision: batch.calls[0]!.revision },
          });
          await wait;
        }
      }),
    );
  } finally {
    pool.close();
    agent.destroy();
  }
  await waitIdle(target.pid, 10_000);
}
