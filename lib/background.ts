import { readlinkSync } from "node:fs";
import { hostname } from "node:os";
import { randomUUID } from "node:crypto";
import { expireBatch, overdueBatchIds } from "@/lib/batches/expire-batch";
import { expireLease, expiredLeaseRunIds } from "@/lib/runs/expire-lease";
import { emailConfigured } from "@/lib/email/transport";
import { deliverDueNotifications } from "@/lib/notifications/deliver-notifications";
import { planNotifications } from "@/lib/notifications/plan-notifications";
import { planSuggestionDigests } from "@/lib/policies/suggestions-digest";
import { slackConfigured } from "@/lib/slack/config";
import { deliverSlack } from "@/lib/slack/deliver-slack";
import { planSlack } from "@/lib/slack/plan-slack";
import { deliverDueWebhooks } from "@/lib/webhooks/deliver-webhooks";
import { logChainHead } from "@/lib/audit/chain-head";
import { dueWork } from "@/lib/cluster/due-work";
import { holdLease, leaseHolder, releaseLease } from "@/lib/cluster/hold-lease";
import { shutdownSignal } from "@/lib/shutdown";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// The server's background work: the deadline sweeper, lease expiry, webhook delivery,
// notifications (planned from the event log, then sent), the Slack outbox (the same, per queue
// channel) and the chain head's log line. It is the cluster's work, not each instance's: one
// instance at a time does it, the holder of the `background` lease (lib/cluster), so N idle
// instances cost the database one instance's polling plus a lease attempt each, not N times the
// polling. When the holder dies another instance takes the lease over once it expires
// (CLUSTER_LEASE_MS). Every step is still a conditional write, so a holder that stalled past its
// lease and runs a step beside its successor settles nothing twice.
//
// Each instance still sweeps once at start: deadlines that passed while no server ran are settled
// before the first request is served, whoever holds the lease.

const LEASE = "background";

const globalWork = globalThis as unknown as { __countersignBackground?: { stop(): void } };

/** Passes over overdue batches and expired leases once; returns how many it settled. */
export async function sweepOnce(now = Date.now()): Promise<number> {
  let settled = 0;
  for (const id of await overdueBatchIds(now)) if (await expireBatch(id, now)) settled++;
  for (const id of await expiredLeaseRunIds(now)) if (await expireLease(id, now)) settled++;
  return settled;
}

/** Runs `work` every `ms` (and at once when `now`), never two passes at a time. */
function every(ms: number, work: () => Promise<unknown>, label: string, now = false): () => void {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    work()
      .catch((error) => log().error({ err: error }, `${label} failed; will retry`))
      .finally(() => (running = false));
  };
  const timer = setInterval(run, ms);
  timer.unref();
  if (now) run();
  return () => clearInterval(timer);
}

/**
 * Where this process's pid means something: the host, and on Linux its pid namespace (containers
 * sharing a host's name each have their own, and a pid of one is not a process of another).
 */
function pidPlace(): string {
  try {
    return `${hostname()}~${readlinkSync("/proc/self/ns/pid").replace(/\D/g, "")}`;
  } catch {
    return hostname();
  }
}

/** This process's name in the lease row: where it runs, its pid (see takeOverFromTheDead), a nonce. */
const holder = `${pidPlace()}/${process.pid}/${randomUUID().slice(0, 8)}`;

export async function startBackgroundWork(): Promise<void> {
  if (globalWork.__countersignBackground) return;
  const ttlMs = setting("CLUSTER_LEASE_MS");
  let stopHeldWork: (() => void) | null = null;
  /** until when (this process's monotonic clock) the lease is surely ours: a renewal's start + ttl */
  let heldUntil = 0;
  const holding = () => performance.now() < heldUntil;
  let stopped = false;

  const attempt = async (first = false) => {
    const startedAt = performance.now();
    let held: boolean;
    try {
      held = await holdLease(LEASE, holder, ttlMs);
      if (!held && first) held = await takeOverFromTheDead(ttlMs);
    } catch (error) {
      // Unreachable database: keep what we hold until it surely ran out, then let go.
      log().error({ err: error }, "Holding the background lease failed; will retry");
      held = holding();
    }
    if (stopped) return;
    if (held) heldUntil = Math.max(heldUntil, startedAt + ttlMs);
    if (held && !stopHeldWork) {
      log().info({ holder }, "This instance now runs the cluster's background work");
      stopHeldWork = startHeldWork(holding);
    } else if (!held && stopHeldWork) {
      log().info({ holder }, "Another instance runs the cluster's background work now");
      stopHeldWork();
      stopHeldWork = null;
    }
  };

  await sweepOnce();
  await attempt(true);
  // Renewed at a third of its life: two renewals can fail (a slow database) before it lapses.
  const stopAttempts = every(ttlMs / 3, () => attempt(), "Holding the background lease");
  const stop = () => {
    if (stopped) return;
    stopped = true;
    stopAttempts();
    stopHeldWork?.();
    stopHeldWork = null;
    // A clean stop hands the work over at once instead of after the lease runs out.
    if (holding()) {
      heldUntil = 0;
      releaseLease(LEASE, holder).catch(() => {});
    }
  };
  shutdownSignal().addEventListener("abort", stop, { once: true });
  globalWork.__countersignBackground = { stop };
}

/**
 * At start, a lease held by a process of this host that no longer runs (a crash, or a restart
 * faster than the lease's life) is taken at once rather than after it expires. A pid that was
 * reused by another process only makes us wait for the expiry.
 */
async function takeOverFromTheDead(ttlMs: number): Promise<boolean> {
  const current = await leaseHolder(LEASE);
  const [host, pid] = current?.split("/") ?? [];
  if (!current || host !== pidPlace() || !pid || alive(Number(pid))) return false;
  return holdLease(LEASE, holder, ttlMs, current);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * The holder's periodic work, on one tick whose single read (dueWork) says which workers have
 * anything to do, so an idle holder makes one request per tick; each worker still runs no more
 * often than its own interval asks. Deadlines approaching (an email notice) are not in the log:
 * the email planner also runs every tenth of a minute or so without events to look for them.
 */
function startHeldWork(holding: () => boolean): () => void {
  const email = emailConfigured();
  const slack = slackConfigured();
  const intervals = {
    sweep: setting("SWEEP_INTERVAL_MS"),
    webhooks: setting("WEBHOOK_POLL_MS"),
    email: email ? setting("NOTIFY_POLL_MS") : Infinity,
    slack: slack ? setting("SLACK_POLL_MS") : Infinity,
  };
  const deadlineScanMs = 10 * intervals.email;
  const last = { sweep: -Infinity, webhooks: -Infinity, email: -Infinity, slack: -Infinity };
  let lastDeadlineScan = -Infinity;
  const tick = async () => {
    if (!holding()) return;
    const at = performance.now();
    const turn = (name: keyof typeof last) => at - last[name] >= intervals[name] - 5;
    const turns = {
      sweep: turn("sweep"),
      webhooks: turn("webhooks"),
      email: turn("email"),
      slack: turn("slack"),
    };
    if (!Object.values(turns).some(Boolean)) return;
    const due = await dueWork({ email, slack });
    for (const name of Object.keys(turns) as (keyof typeof last)[])
      if (turns[name]) last[name] = at;
    // each worker on its own: one that fails does not hold the others back
    const run = (label: string, work: () => Promise<unknown>) =>
      work().catch((error) => log().error({ err: error }, `${label} failed; will retry`));
    if (turns.sweep && due.sweep) await run("The deadline sweeper", sweepOnce);
    if (turns.webhooks && due.webhooks) await run("Webhook delivery", deliverDueWebhooks);
    if (turns.email) {
      const scanDeadlines = at - lastDeadlineScan >= deadlineScanMs;
      if (scanDeadlines) lastDeadlineScan = at;
      await run("Notifications", async () => {
        if (due.emailEvents || scanDeadlines) await planNotifications();
        // each queue's weekly policy suggestions, for its leads (a cheap read until a week is up)
        if (scanDeadlines) await planSuggestionDigests();
        if (due.emailDue || due.emailEvents || scanDeadlines) await deliverDueNotifications();
      });
    }
    if (turns.slack) {
      await run("Slack posting", async () => {
        if (due.slackEvents) await planSlack();
        if (due.slackDue || due.slackEvents) await deliverSlack();
      });
    }
  };
  const stops = [
    every(Math.min(...Object.values(intervals)), tick, "The cluster's background work", true),
    every(
      setting("AUDIT_HEAD_LOG_MS"),
      async () => holding() && (await logChainHead()),
      "Logging the chain head",
      true,
    ),
  ];
  return () => stops.forEach((stop) => stop());
}
