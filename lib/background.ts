import { expireBatch, overdueBatchIds } from "@/lib/batches/expire-batch";
import { getTailer } from "@/lib/events/tailer";
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
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// The server's background work: the deadline sweeper (which also catches up, at start, on
// deadlines that passed while no server ran), lease expiry, webhook delivery, and notifications
// (planned from the event log, then sent), and the Slack outbox (the same, per queue channel).
// Every step is a
// conditional write, so several processes may run it over one database.

const globalWork = globalThis as unknown as { __countersignBackground?: { stop(): void } };

/** Passes over overdue batches and expired leases once; returns how many it settled. */
export async function sweepOnce(now = Date.now()): Promise<number> {
  let settled = 0;
  for (const id of await overdueBatchIds(now)) if (await expireBatch(id, now)) settled++;
  for (const id of await expiredLeaseRunIds(now)) if (await expireLease(id, now)) settled++;
  return settled;
}

function every(ms: number, work: () => Promise<unknown>, label: string): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    work()
      .catch((error) => log().error({ err: error }, `${label} failed; will retry`))
      .finally(() => (running = false));
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

export async function startBackgroundWork(): Promise<void> {
  if (globalWork.__countersignBackground) return;
  const tailer = getTailer();
  await tailer.position(); // start following the event log
  await sweepOnce();
  await logChainHead();
  const stops = [
    every(setting("AUDIT_HEAD_LOG_MS"), () => logChainHead(), "Logging the chain head"),
    every(setting("SWEEP_INTERVAL_MS"), () => sweepOnce(), "The deadline sweeper"),
    every(setting("WEBHOOK_POLL_MS"), () => deliverDueWebhooks(), "Webhook delivery"),
    every(
      setting("NOTIFY_POLL_MS"),
      async () => {
        // Without a channel to send on there is nothing to plan (lib/notifications explains)
        if (!emailConfigured()) return;
        await planNotifications();
        // each queue's weekly policy suggestions, for its leads (a cheap read until a week is up)
        await planSuggestionDigests();
        await deliverDueNotifications();
      },
      "Notifications",
    ),
    every(
      setting("SLACK_POLL_MS"),
      async () => {
        if (!slackConfigured()) return;
        await planSlack();
        await deliverSlack();
      },
      "Slack posting",
    ),
  ];
  globalWork.__countersignBackground = {
    stop: () => {
      stops.forEach((stop) => stop());
      tailer.stop();
    },
  };
}
