import { Histogram } from "prom-client";

// The write path's own metric, kept beside it so that db/ imports nothing above it:
// lib/metrics/metrics.ts adds it to the registry /metrics serves (the names are documented in
// lib/metrics/README.md). An in-memory histogram: a write batch pays an observation.
//
// One per process, on globalThis: Next's bundle and the production server's each load their own
// copy of db/ and lib/ (lib/http/server.ts), and both must count into the same histogram.

/** How long one write batch takes, lock wait included: sub-millisecond to the 5 s busy limit. */
const WRITE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

function createWriteMetrics() {
  return {
    writeDuration: new Histogram({
      name: "countersign_write_batch_duration_seconds",
      help: "Time of one atomic write batch, its wait for the write lock included, by result: committed, moved (a compare-and-swap guard found the state changed), failed.",
      labelNames: ["result"] as const,
      buckets: WRITE_BUCKETS,
      // registered by lib/metrics/metrics.ts, into the registry it serves
      registers: [],
    }),
  };
}

export type WriteMetrics = ReturnType<typeof createWriteMetrics>;

const store = globalThis as typeof globalThis & { __countersignWriteMetrics?: WriteMetrics };

/** The metrics of db/write-batch.ts. */
export function writeMetrics(): WriteMetrics {
  return (store.__countersignWriteMetrics ??= createWriteMetrics());
}
