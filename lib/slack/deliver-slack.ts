import { and, asc, eq, lte, or, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { batches, queues, slackMessages, type SlackMessage } from "@/db/schema";
import { updateRow, writeBatch } from "@/db/write-batch";
import { setting } from "@/lib/config/settings";
import { loadBatchView } from "@/lib/read-models/batch-run-views";
import { slackClient, slackConfigured, slackTimeoutMs } from "./config";
import { renderCardMessage } from "./render-message";

// The Slack outbox's worker: posts the cards plan-slack.ts planned and keeps posted messages up
// to date, as the email worker sends notifications (lib/notifications/deliver-notifications.ts):
//
// - each post or update is claimed first (compare-and-swap on the row's due time, pushed
//   IN_FLIGHT ahead), so two processes never work one row at once, and a process that died
//   mid-call leaves a row that comes due again once its claim has run out;
// - a failed call (Slack down, rate limited, refused) is retried with exponential backoff; a
//   post that failed MAX_ATTEMPTS times is `failed`; an update that did gives up on that change
//   (the next change tries again);
// - visibility is checked when posting, not when planning: a card that has moved to another
//   queue, is hidden from reviewers, was settled already, or whose queue's channel changed is not
//   posted (`skipped`, with why). A posted message is always updated, but shows the card's
//   outcome, or that it moved, never where it moved to.
//
// Posting is at least once, as every outbox is: a process killed between Slack's answer and the
// row's `posted` write posts the card again once the claim runs out. Everything else (a restart,
// two processes, a retry after an answered failure) posts it once.

const MAX_ATTEMPTS = 8;
const PAGE = 50;

function inFlightMs(): number {
  return slackTimeoutMs() * 2 + 1000;
}

export function slackRetryDelayMs(attempts: number): number {
  const base = setting("SLACK_RETRY_BASE_MS");
  return Math.min(base * 2 ** Math.max(0, attempts - 1), 3600_000);
}

/** Rows this process is working on now: a later poll of the same process leaves them alone. */
const working = new Set<string>();

/** Posts and updates what is due; returns how many Slack calls succeeded. */
export async function deliverSlack(now = Date.now()): Promise<number> {
  if (!slackConfigured()) return 0;
  const due = (
    await getDb()
      .select()
      .from(slackMessages)
      .where(
        and(
          or(
            eq(slackMessages.status, "pending"),
            and(
              eq(slackMessages.status, "posted"),
              sql`${slackMessages.wantedSeq} > ${slackMessages.shownSeq}`,
            ),
          ),
          lte(slackMessages.nextAttemptAt, now),
        ),
      )
      .orderBy(asc(slackMessages.nextAttemptAt))
      .limit(PAGE)
  ).filter((row) => !working.has(row.id));
  let done = 0;
  for (const row of due) {
    working.add(row.id);
    try {
      if (await work(row, now)) done++;
    } catch (error) {
      // the row keeps its claim and comes due again when it runs out
      console.error("Slack delivery failed; will retry:", error);
    } finally {
      working.delete(row.id);
    }
  }
  return done;
}

/** Claims `row` as read: no other process (nor a later poll) has claimed or finished it since. */
async function claim(row: SlackMessage, now: number): Promise<boolean> {
  const [result] = await writeBatch([
    updateRow(
      slackMessages,
      { attempts: row.attempts + 1, nextAttemptAt: now + inFlightMs() },
      "id = ? and status = ? and next_attempt_at = ? and attempts = ?",
      row.id,
      row.status,
      row.nextAttemptAt,
      row.attempts,
    ),
  ]);
  return result!.rowsAffected === 1;
}

async function work(row: SlackMessage, now: number): Promise<boolean> {
  if (!(await claim(row, now))) return false;
  const attempts = row.attempts + 1;
  const db = getDb();
  const [card, [state], [queue]] = await Promise.all([
    loadBatchView(db, row.batchId, "reviewer"),
    db
      .select({ hidden: batches.hiddenFromReviewers })
      .from(batches)
      .where(eq(batches.id, row.batchId)),
    db
      .select({ name: queues.name, channel: queues.slackChannelId })
      .from(queues)
      .where(eq(queues.id, row.queueId)),
  ]);
  const mine = "id = ? and attempts = ?";

  if (row.status === "pending") {
    const reason = !card
      ? "the card no longer exists"
      : state?.hidden
        ? "the card is hidden from reviewers"
        : card.queue.id !== row.queueId
          ? "the card moved to another queue before it was posted"
          : queue?.channel !== row.channelId
            ? "the queue no longer posts to this channel"
            : card.status !== "pending"
              ? "the card was settled before it was posted"
              : null;
    if (reason) {
      await writeBatch([
        updateRow(slackMessages, { status: "skipped", lastError: reason }, mine, row.id, attempts),
      ]);
      return false;
    }
  }
  if (!card) {
    // a posted message whose card is gone: nothing to show; stop trying
    await writeBatch([
      updateRow(slackMessages, { shownSeq: row.wantedSeq }, mine, row.id, attempts),
    ]);
    return false;
  }

  const message = renderCardMessage(card, { id: row.queueId, name: queue?.name ?? "" });
  try {
    if (row.status === "pending") {
      const answer = await slackClient().chat.postMessage({
        channel: row.channelId,
        ...message,
        unfurl_links: false,
        unfurl_media: false,
      } as Parameters<ReturnType<typeof slackClient>["chat"]["postMessage"]>[0]);
      await writeBatch([
        updateRow(
          slackMessages,
          {
            status: "posted",
            ts: answer.ts ?? null,
            // the channel Slack answered with (a user id given as a channel becomes a DM's id)
            channelId: answer.channel ?? row.channelId,
            shownSeq: row.wantedSeq,
            attempts: 0,
            lastError: null,
            postedAt: Date.now(),
            // due at once if an event came meanwhile (then wanted_seq moved past shown_seq)
            nextAttemptAt: Date.now(),
          },
          mine,
          row.id,
          attempts,
        ),
      ]);
    } else {
      await slackClient().chat.update({
        channel: row.channelId,
        ts: row.ts!,
        ...message,
      } as Parameters<ReturnType<typeof slackClient>["chat"]["update"]>[0]);
      await writeBatch([
        updateRow(
          slackMessages,
          { shownSeq: row.wantedSeq, attempts: 0, lastError: null, nextAttemptAt: Date.now() },
          mine,
          row.id,
          attempts,
        ),
      ]);
    }
    return true;
  } catch (cause) {
    const error = slackError(cause);
    const givenUp = attempts >= MAX_ATTEMPTS;
    await writeBatch([
      updateRow(
        slackMessages,
        row.status === "pending" && givenUp
          ? { status: "failed", lastError: error }
          : givenUp
            ? { shownSeq: row.wantedSeq, attempts: 0, lastError: error, nextAttemptAt: Date.now() }
            : { lastError: error, nextAttemptAt: Date.now() + slackRetryDelayMs(attempts) },
        mine,
        row.id,
        attempts,
      ),
    ]);
    return false;
  }
}

/** Slack's error code ("channel_not_found", "ratelimited"), or the failure's message. */
function slackError(cause: unknown): string {
  const data = (cause as { data?: { error?: string } }).data;
  if (data?.error) return `Slack answered ${data.error}`;
  return (cause instanceof Error ? cause.message : String(cause)).slice(0, 500);
}
