import { getClient } from "@/db/client";

// What the cluster's periodic work would find, asked in ONE read (one request to a libSQL
// server) instead of one or more per worker: an idle cluster costs the database a request per
// tick, and the workers' own queries run only when it says they have something to do. Each test
// is an EXISTS on the partial index its worker reads (batches_pending_deadline_idx,
// runs_lease_idx, webhook_due_idx, notifications_due_idx, slack_messages_due_idx) or a compare of
// the event log's end with a planner's cursor (notification_cursors).

export type DueWork = {
  /** pending batches past their deadline, or resuming runs whose claim ran out */
  sweep: boolean;
  /** webhook deliveries due (lib/webhooks/deliver-webhooks.ts) */
  webhooks: boolean;
  /** events the email planner has not read yet (lib/notifications/plan-notifications.ts) */
  emailEvents: boolean;
  /** emails due (lib/notifications/deliver-notifications.ts) */
  emailDue: boolean;
  /** events the Slack planner has not read yet (lib/slack/plan-slack.ts) */
  slackEvents: boolean;
  /** Slack posts or updates due (lib/slack/deliver-slack.ts) */
  slackDue: boolean;
};

/** Events after a planner's cursor (or no cursor yet: its first pass creates it). */
const eventsAfter = (cursor: string) =>
  `coalesce((select max(seq) from events), 0) > coalesce((select position from notification_cursors where name = '${cursor}'), -1)`;

/** `channels` says which outboxes are configured: the others are not asked about. */
export async function dueWork(
  channels: { email: boolean; slack: boolean },
  now = Date.now(),
): Promise<DueWork> {
  const { rows } = await getClient().execute({
    sql: `select
            exists (select 1 from batches where status = 'pending' and expires_at <= :now)
              or exists (select 1 from runs where status = 'resuming' and lease_expires_at <= :now),
            exists (select 1 from webhook_deliveries where status = 'pending' and next_attempt_at <= :now),
            ${channels.email ? eventsAfter("events") : "0"},
            ${channels.email ? "exists (select 1 from notifications where status = 'pending' and next_attempt_at <= :now)" : "0"},
            ${channels.slack ? eventsAfter("slack") : "0"},
            ${
              channels.slack
                ? `exists (select 1 from slack_messages where (status = 'pending' or (status = 'posted' and wanted_seq > shown_seq))
                     and next_attempt_at <= :now)`
                : "0"
            }`,
    args: { now },
  });
  const flag = (i: number) => Number(rows[0]?.[i]) === 1;
  return {
    sweep: flag(0),
    webhooks: flag(1),
    emailEvents: flag(2),
    emailDue: flag(3),
    slackEvents: flag(4),
    slackDue: flag(5),
  };
}
