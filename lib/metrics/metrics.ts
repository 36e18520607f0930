import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type Metric,
} from "prom-client";
import type { EventRow } from "@/db/schema";
import { getClient } from "@/db/client";
import { writeMetrics } from "@/db/write-metrics";
import { unavailableAnswers } from "@/lib/errors";

// The Prometheus metrics of this process (served at /metrics: app/metrics/route.ts; the names are
// documented in lib/metrics/README.md). Counters and histograms are kept in memory where the thing happens —
// a decision's write batch, a webhook attempt, a 503 — and cost an increment there; the gauges
// that describe the database (queue depth, outbox backlogs) are read when Prometheus scrapes,
// from partial or covering indexes, so a scrape costs a few index lookups and no request pays.
//
// One registry per process, on globalThis: Next's bundle and the production server's each load
// their own copy of lib/ (lib/http/server.ts), and both must count into the same metrics.

/** How long cards wait for their decision: seconds to hours (deadlines default to an hour). */
const WAIT_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400];

function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metric = { registers: [registry] };
  return {
    registry,
    decisions: new Counter({
      name: "countersign_decisions_total",
      help: "Calls decided in this process, by outcome (approved, rejected) and source (reviewer, policy, memory, timeout).",
      labelNames: ["outcome", "source"] as const,
      ...metric,
    }),
    timeToDecision: new Histogram({
      name: "countersign_time_to_decision_seconds",
      help: "How long a card waited from creation to settling, observed as it settles: status decided or expired (deadline passed); queue_id as in countersign_queue_depth.",
      labelNames: ["queue_id", "status"] as const,
      buckets: WAIT_BUCKETS,
      ...metric,
    }),
    escalations: new Counter({
      name: "countersign_escalations_total",
      help: "Cards moved to an escalation queue at their deadline, by the queue they left.",
      labelNames: ["queue_id"] as const,
      ...metric,
    }),
    webhookAttempts: new Counter({
      name: "countersign_webhook_attempts_total",
      help: "Webhook delivery attempts, by result: delivered, retry (to be tried again), failed (never will be).",
      labelNames: ["result"] as const,
      ...metric,
    }),
    notificationAttempts: new Counter({
      name: "countersign_notification_attempts_total",
      help: "Notification outbox rows handled, by result: sent, retry, failed (out of attempts), skipped.",
      labelNames: ["result"] as const,
      ...metric,
    }),
    // kept by db/ itself (db/write-metrics.ts), which imports nothing above it
    writeDuration: registered(registry, writeMetrics().writeDuration),
    unavailable: new Counter({
      name: "countersign_unavailable_responses_total",
      help: "Requests answered 503 unavailable (database busy or full), by surface: api or action.",
      labelNames: ["surface"] as const,
      ...metric,
      collect() {
        this.reset();
        for (const surface of ["api", "action"]) this.inc({ surface }, 0);
        for (const [surface, count] of Object.entries(unavailableAnswers()))
          this.inc({ surface }, count);
      },
    }),
    streamConnections: new Gauge({
      name: "countersign_stream_connections",
      help: "Event streams open in this process, by caller kind (agent, reviewer).",
      labelNames: ["kind"] as const,
      ...metric,
      collect() {
        this.reset();
        for (const kind of ["agent", "reviewer"]) this.set({ kind }, 0);
        for (const [key, count] of openStreams()) this.inc({ kind: key.split(":")[0]! }, count);
      },
    }),
    queueDepth: new Gauge({
      name: "countersign_queue_depth",
      help: "Cards waiting for a decision, per open queue (read from the database at scrape time).",
      labelNames: ["queue_id", "queue"] as const,
      ...metric,
      async collect() {
        // one lookup per queue in batches_queue_idx (queue_id, status, id)
        const { rows } = await getClient().execute(
          "select q.id, q.name, (select count(*) from batches b where b.queue_id = q.id and b.status = 'pending') as depth from queues q where q.archived_at is null",
        );
        this.reset();
        for (const row of rows)
          this.set({ queue_id: row.id as string, queue: row.name as string }, Number(row.depth));
      },
    }),
    webhookBacklog: new Gauge({
      name: "countersign_webhook_backlog",
      help: "Webhook deliveries still owed (pending), read from the database at scrape time.",
      ...metric,
      async collect() {
        this.set(await countPending("webhook_deliveries"));
      },
    }),
    notificationBacklog: new Gauge({
      name: "countersign_notification_backlog",
      help: "Notifications still owed (pending) in the outbox, read from the database at scrape time.",
      ...metric,
      async collect() {
        this.set(await countPending("notifications"));
      },
    }),
  };
}

/** Counted from the partial index of what is still owed (webhook_due_idx, notifications_due_idx). */
async function countPending(table: "webhook_deliveries" | "notifications"): Promise<number> {
  const { rows } = await getClient().execute(
    `select count(*) as n from ${table} where status = 'pending' and next_attempt_at > -1`,
  );
  return Number(rows[0]!.n);
}

/** lib/events/stream-slots.ts's count of open streams per caller (`<kind>:<id>` → count). */
function openStreams(): Map<string, number> {
  const store = globalThis as { __countersignStreamSlots?: Map<string, number> };
  return store.__countersignStreamSlots ?? new Map();
}

function registered<T extends Metric>(registry: Registry, metric: T): T {
  registry.registerMetric(metric);
  return metric;
}

export type Metrics = ReturnType<typeof createMetrics>;

const store = globalThis as typeof globalThis & { __countersignMetrics?: Metrics };

export function metrics(): Metrics {
  return (store.__countersignMetrics ??= createMetrics());
}

/**
 * Counts what a committed write batch settled, from the event rows it appended (lib/events/
 * commit.ts hands them over): every decided or policy-blocked call, every card settled (its
 * wait), every escalation. In memory only: the decision's request pays an increment.
 */
export function observeEvents(rows: EventRow[]): void {
  if (rows.length === 0) return;
  const m = metrics();
  for (const row of rows) {
    if (row.type === "call.decided" || row.type === "call.blocked") {
      const { outcome, source } = row.data as { outcome?: string; source?: string };
      if (outcome && source) m.decisions.inc({ outcome, source });
    } else if (row.type === "batch.decided" || row.type === "batch.expired") {
      const createdAt = Date.parse(
        String((row.data.batch as { createdAt?: string } | undefined)?.createdAt),
      );
      if (Number.isFinite(createdAt)) {
        m.timeToDecision.observe(
          { queue_id: row.queueId ?? "", status: row.type.slice("batch.".length) },
          Math.max(0, row.at - createdAt) / 1000,
        );
      }
    } else if (row.type === "batch.escalated") {
      // written twice, once for each queue's members: counted once, by the queue it left
      const from = (row.data as { from?: { id?: string } }).from?.id;
      if (from && row.queueId === from) m.escalations.inc({ queue_id: from });
    }
  }
}
