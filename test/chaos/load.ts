import { refundBatch } from "../support/http";
import { sleep } from "../support/polling";
import { openSse, type SseClient } from "../support/sse";

// The steady load every chaos scenario holds while it injects its fault: agents pausing new runs
// and reviewers deciding them, over plain HTTP, recording every answer. A request that gets no
// answer (the server died) or a 503 is not acknowledged and is tried again, as the SDK would.

export type Pause = { externalId: string; runId: string; batchId: string; callId: string };
export type Decision = { callId: string; outcome: "approved" | "rejected"; reviewerId: string };
export type Reviewer = { id: string; token: string };

export type LoadStats = {
  pausesAcknowledged: Pause[];
  decisionsAcknowledged: Decision[];
  /** externalIds of pauses answered 503: nothing of them may exist */
  pausesRefused: string[];
  /** answers by status (0: no answer) */
  statuses: Map<number, number>;
  /** 503 answers that lacked the contract's shape or Retry-After */
  malformed503: number;
  latency: { pause: number[]; decide: number[] };
  /** Date.now() of every acknowledged write, to time recovery */
  writeTimes: number[];
};

export type Load = LoadStats & {
  stop: () => Promise<void>;
  /** calls paused and not yet decided (in the order they were paused) */
  undecided: Pause[];
};

export type LoadOptions = {
  /** picks the server for each request (several servers: spread the clients) */
  baseUrl: (worker: number) => string;
  agentKey: string;
  reviewers: Reviewer[];
  agents: number;
  deciders: number;
  /** extra fields for each pause's batch (a callbackUrl…), by pause number */
  batchExtras?: (n: number) => Record<string, unknown>;
  /** a pause between one worker's requests, to hold a steady rather than saturating rate */
  thinkMs?: number;
};

const REQUEST_TIMEOUT_MS = 15_000;
/** numbers every pause of this process, so each load's externalIds are new */
let pauseNumber = 0;

export async function post(
  url: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: any; headers: Headers | null; ms: number }> {
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: kept as text, and counted as malformed if it was a 503
    }
    return {
      status: response.status,
      body: parsed,
      headers: response.headers,
      ms: performance.now() - started,
    };
  } catch {
    return { status: 0, body: null, headers: null, ms: performance.now() - started };
  }
}

export function startLoad(options: LoadOptions): Load {
  const stats: Load = {
    pausesAcknowledged: [],
    decisionsAcknowledged: [],
    pausesRefused: [],
    statuses: new Map(),
    malformed503: 0,
    latency: { pause: [], decide: [] },
    writeTimes: [],
    undecided: [],
    stop: async () => {},
  };
  let running = true;
  let pauseCount = 0;
  const count = (answer: { status: number; body: any; headers: Headers | null }) => {
    stats.statuses.set(answer.status, (stats.statuses.get(answer.status) ?? 0) + 1);
    if (
      answer.status === 503 &&
      (answer.body?.error?.code !== "unavailable" || !answer.headers?.get("retry-after"))
    )
      stats.malformed503++;
  };
  const rest = async (status: number) => {
    // back off after a refusal, as a client honouring Retry-After (shortened) would
    if (status === 0 || status >= 500) await sleep(100);
    else if (options.thinkMs) await sleep(options.thinkMs);
  };

  const agent = async (worker: number) => {
    while (running) {
      const n = pauseCount++;
      const externalId = `chaos-${process.pid}-${pauseNumber++}`;
      const answer = await post(`${options.baseUrl(worker)}/api/v1/runs`, options.agentKey, {
        externalId,
        batch: refundBatch(options.batchExtras?.(n) ?? {}),
      });
      count(answer);
      if (answer.status === 201) {
        const batch = answer.body.batches[0];
        const pause = {
          externalId,
          runId: answer.body.id,
          batchId: batch.id,
          callId: batch.calls[0].id,
        };
        stats.pausesAcknowledged.push(pause);
        stats.undecided.push(pause);
        stats.latency.pause.push(answer.ms);
        stats.writeTimes.push(Date.now());
      } else if (answer.status === 503) {
        stats.pausesRefused.push(externalId);
      }
      await rest(answer.status);
    }
  };

  const decider = async (worker: number) => {
    while (running) {
      const pause = stats.undecided.shift();
      if (!pause) {
        await sleep(10);
        continue;
      }
      const reviewer = options.reviewers[worker % options.reviewers.length]!;
      const outcome = worker % 3 === 2 ? "reject" : "approve";
      const answer = await post(
        `${options.baseUrl(worker)}/api/v1/calls/${pause.callId}/decision`,
        reviewer.token,
        { outcome, expectedRevision: 1 },
      );
      count(answer);
      if (answer.status === 200) {
        stats.decisionsAcknowledged.push({
          callId: pause.callId,
          outcome: outcome === "approve" ? "approved" : "rejected",
          reviewerId: reviewer.id,
        });
        stats.latency.decide.push(answer.ms);
        stats.writeTimes.push(Date.now());
      } else if (answer.status === 0 || answer.status >= 500) {
        // not acknowledged: try again (a 409 later means the lost answer's write did land)
        stats.undecided.push(pause);
      }
      await rest(answer.status);
    }
  };

  const workers = [
    ...Array.from({ length: options.agents }, (_, i) => agent(i)),
    ...Array.from({ length: options.deciders }, (_, i) => decider(i)),
  ];
  stats.stop = async () => {
    running = false;
    await Promise.all(workers);
  };
  return stats;
}

/**
 * A reviewer's stream that reconnects whenever it ends (the server died or restarted) with the
 * last id it saw, as EventSource does. `ids` is everything it received, across connections.
 */
export type Follower = {
  ids: () => number[];
  reconnects: () => number;
  resyncs: () => number;
  stop: () => void;
};

export function followStream(baseUrl: () => string, token: string): Follower {
  const done: number[] = [];
  let current: SseClient | null = null;
  let connections = 0;
  let resyncs = 0;
  let running = true;
  const idsOf = (client: SseClient | null) =>
    (client?.messages ?? []).filter((m) => m.id !== null).map((m) => Number(m.id));
  void (async () => {
    while (running) {
      const lastEventId = done.at(-1) ?? 0;
      let client: SseClient;
      try {
        client = await openSse(`${baseUrl()}/api/v1/stream`, { token, lastEventId });
      } catch {
        await sleep(50); // no server yet
        continue;
      }
      if (client.status !== 200) {
        client.close();
        await sleep(100);
        continue;
      }
      connections++;
      current = client;
      await client.ended;
      current = null;
      done.push(...idsOf(client));
      resyncs += client.messages.filter((m) => m.event === "resync").length;
      if (running) await sleep(20);
    }
  })();
  return {
    ids: () => [...done, ...idsOf(current)],
    reconnects: () => Math.max(0, connections - 1),
    resyncs: () => resyncs + (current?.messages.filter((m) => m.event === "resync").length ?? 0),
    stop: () => {
      running = false;
      current?.close();
    },
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
