import { openRawStreams, type Endpoint, type RawStreamPool } from "./load";

// One generator process of the fan-out scenario (test/bench/fanout.ts forks several, so that
// thousands of stream clients do not share one event loop with the pacer and each other). It
// holds its share of the SSE connections, notes when each `batch.created` arrives (on the
// machine-wide monotonic clock, which the parent's send times share) and answers the parent over
// IPC. It exits when the parent says so or goes away, so a killed bench leaves no generator behind.

export type WorkerRequest = { id: number } & (
  | {
      kind: "open";
      endpoint: Endpoint;
      path: string;
      token: string;
      count: number;
      connectConcurrency: number;
    }
  /** how many arrivals of these toolCallIds so far */
  | { kind: "progress"; tokens: string[] }
  /** per (client, pause) latency for these sends: [toolCallId, sentAt (monoMs)] */
  | { kind: "collect"; sent: [string, number][] }
  | { kind: "close" }
);

export type WorkerReply = { id: number } & (
  | { kind: "opened" }
  | { kind: "progress"; received: number }
  | { kind: "samples"; latencies: number[]; ended: number }
  | { kind: "closed" }
  | { kind: "failed"; message: string }
);

/** toolCallId → arrival times, one per client that received it */
const arrivals = new Map<string, number[]>();
let pool: RawStreamPool | null = null;

const reply = (message: WorkerReply) => void process.send!(message);

function shutdown(code: number) {
  pool?.close();
  process.exit(code);
}

async function handle(request: WorkerRequest): Promise<void> {
  switch (request.kind) {
    case "open":
      pool = await openRawStreams(request.endpoint, {
        path: request.path,
        token: request.token,
        count: request.count,
        connectConcurrency: request.connectConcurrency,
        onBatchCreated: (_client, toolCallId, receivedAt) => {
          const times = arrivals.get(toolCallId);
          if (times) times.push(receivedAt);
          else arrivals.set(toolCallId, [receivedAt]);
        },
      });
      return reply({ id: request.id, kind: "opened" });
    case "progress": {
      let received = 0;
      for (const token of request.tokens) received += arrivals.get(token)?.length ?? 0;
      return reply({ id: request.id, kind: "progress", received });
    }
    case "collect": {
      const latencies: number[] = [];
      for (const [token, sentAt] of request.sent)
        for (const at of arrivals.get(token) ?? []) latencies.push(at - sentAt);
      arrivals.clear();
      return reply({ id: request.id, kind: "samples", latencies, ended: pool?.ended() ?? 0 });
    }
    case "close":
      pool?.close();
      pool = null;
      reply({ id: request.id, kind: "closed" });
      // let the reply reach the parent before the channel goes
      return void setTimeout(() => shutdown(0), 50);
  }
}

if (!process.send) throw new Error("fanout-worker.ts runs as a child of test/bench/fanout.ts");
process.on("message", (request: WorkerRequest) => {
  handle(request).catch((error: unknown) =>
    reply({ id: request.id, kind: "failed", message: String(error).split("\n")[0]! }),
  );
});
process.on("disconnect", () => shutdown(0));
process.on("SIGTERM", () => shutdown(0));
process.on("SIGINT", () => shutdown(0));
