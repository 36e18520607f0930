import { metrics } from "@/lib/metrics/metrics";
import { and, asc, eq, inArray, lte } from "drizzle-orm";
import { getDb } from "@/db/client";
import {
  batches,
  notificationPreferences,
  notifications,
  queueMembers,
  users,
  type Notification,
} from "@/db/schema";
import { statement, updateRow, writeBatch, type Statement } from "@/db/write-batch";
import { loadBatchViews, type BatchView } from "@/lib/read-models/batch-run-views";
import { cardLinkUrl } from "@/lib/email/card-links";
import { resolveTimeZone } from "@/lib/time/zone";
import { renderCardMail, renderDigestMail, type CardItem } from "@/lib/email/render-card-email";
import { renderSuggestionsMail } from "@/lib/email/render-suggestions-email";
import { emailConfigured, sendMail, smtpTimeoutMs, type OutgoingMail } from "@/lib/email/transport";
import { KIND_SWITCH } from "./preferences";
import { setting } from "@/lib/config/settings";
import { log } from "@/lib/log/logger";

// The notification outbox's worker: sends what the planner (plan-notifications.ts) owes, as
// webhooks are sent (lib/webhooks/deliver-webhooks.ts). State lives in the rows, so a restart
// resumes where it stopped:
//
// - a send is claimed first (compare-and-swap on the due time, pushed IN_FLIGHT ahead), so two
//   processes never send one row at once, and a process that died mid-send leaves a row that
//   comes due again once the claim has run out;
// - a failed send (server down, refused, timed out) is retried with exponential backoff, up to
//   MAX_ATTEMPTS; then the row is `failed`;
// - whether the person may still see the card is checked at send time, not when it was planned:
//   someone who left the queue, was deactivated, or turned the notification off meanwhile gets
//   nothing (`skipped`, with why). Cards no longer pending are not announced either: there is
//   nothing left to do about them (decisions are news whatever the card's state).
//
// Email is at least once, as every outbox is: a process killed between the SMTP server's "250"
// and the row's `sent` write sends that message again. The Message-ID is the row's, the same on
// every attempt, so mail systems can tell the copy.

const MAX_ATTEMPTS = 10;
const PAGE = 100;

/** Longer than any one send can take (nodemailer's own timeouts), so a live send is never claimed twice. */
function inFlightMs(): number {
  return smtpTimeoutMs() * 3 + 1000;
}

export function notificationRetryDelayMs(attempts: number): number {
  const base = setting("NOTIFY_RETRY_BASE_MS");
  return Math.min(base * 2 ** Math.max(0, attempts - 1), 3600_000);
}

/** Rows this process is sending now: a later poll of the same process leaves them alone. */
const sending = new Set<string>();

/**
 * Sends what is due: each immediate notification as its own message, each person's due digest
 * notifications as one. Returns how many messages went out.
 */
export async function deliverDueNotifications(now = Date.now()): Promise<number> {
  if (!emailConfigured()) return 0;
  const due = (
    await getDb()
      .select()
      .from(notifications)
      .where(and(eq(notifications.status, "pending"), lte(notifications.nextAttemptAt, now)))
      .orderBy(asc(notifications.nextAttemptAt))
      .limit(PAGE)
  ).filter((row) => !sending.has(row.id));
  const groups: Notification[][] = [];
  const digests = new Map<string, Notification[]>();
  for (const row of due) {
    if (!row.digest) groups.push([row]);
    else digests.set(row.userId, [...(digests.get(row.userId) ?? []), row]);
  }
  groups.push(...digests.values());

  let sent = 0;
  for (const group of groups) {
    for (const row of group) sending.add(row.id);
    try {
      if (await deliver(group, now)) sent++;
    } catch (error) {
      // the rows stay pending: they come due again when their claim runs out
      log().error({ err: error }, "Notification delivery failed; will retry");
    } finally {
      for (const row of group) sending.delete(row.id);
    }
  }
  return sent;
}

async function claim(group: Notification[], now: number): Promise<Notification[]> {
  const ids = group.map((r) => r.id);
  const [result] = await writeBatch([
    statement(
      `update notifications set attempts = attempts + 1, next_attempt_at = ? where status = 'pending' and next_attempt_at <= ? and id in (${ids.map(() => "?").join(", ")}) returning id`,
      now + inFlightMs(),
      now,
      ...ids,
    ),
  ]);
  const claimed = new Set(result!.rows.map((r) => String(r[0])));
  return group.filter((r) => claimed.has(r.id)).map((r) => ({ ...r, attempts: r.attempts + 1 }));
}

type Recipient = { email: string; deactivated: boolean; timeZone: string };

/** What is true at send time: the person, the cards as they see them, and their say. */
async function sendTimeFacts(rows: Notification[]) {
  const db = getDb();
  const userId = rows[0]!.userId;
  const batchIds = [...new Set(rows.flatMap((r) => (r.batchId ? [r.batchId] : [])))];
  const [[user], memberOf, preferences, cards, states] = await Promise.all([
    db
      .select({ email: users.email, deactivatedAt: users.deactivatedAt, timeZone: users.timeZone })
      .from(users)
      .where(eq(users.id, userId)),
    db
      .select({ queueId: queueMembers.queueId, role: queueMembers.role })
      .from(queueMembers)
      .where(eq(queueMembers.userId, userId)),
    db.select().from(notificationPreferences).where(eq(notificationPreferences.userId, userId)),
    loadBatchViews(db, batchIds, "reviewer"),
    db
      .select({ id: batches.id, hidden: batches.hiddenFromReviewers })
      .from(batches)
      .where(inArray(batches.id, batchIds)),
  ]);
  return {
    recipient: user
      ? ({
          email: user.email,
          deactivated: user.deactivatedAt !== null,
          // Their own zone; an email has no browser to ask, so UTC otherwise.
          timeZone: resolveTimeZone(user.timeZone, null).timeZone,
        } satisfies Recipient)
      : null,
    queues: new Set(memberOf.map((m) => m.queueId)),
    /** the queues whose suggestions they may read: those they lead, or all for an admin */
    leads: memberOf.some((m) => m.role === "admin")
      ? ("all" as const)
      : new Set(memberOf.filter((m) => m.role === "lead").map((m) => m.queueId)),
    preferences: new Map(preferences.map((p) => [p.queueId, p])),
    cards: new Map(cards.map((c) => [c.id, c])),
    hidden: new Set(states.filter((s) => s.hidden).map((s) => s.id)),
  };
}

/** Why `row` must not be sent now, or null when it may. */
function reasonToSkip(
  row: Notification,
  facts: Awaited<ReturnType<typeof sendTimeFacts>>,
): string | null {
  if (!facts.recipient) return "the person no longer exists";
  if (facts.recipient.deactivated) return "the person is deactivated";
  if (row.kind === "suggestions") {
    if (facts.leads !== "all" && !facts.leads.has(row.queueId))
      return "the person no longer leads this queue";
    const preference = facts.preferences.get(row.queueId);
    if (!preference || preference.delivery === "off" || !preference.suggestions)
      return "the person turned this notification off";
    return null;
  }
  const card = row.batchId ? facts.cards.get(row.batchId) : undefined;
  // The card's queue now (an escalation may have moved it), as every reviewer page checks.
  if (!card || facts.hidden.has(card.id) || !facts.queues.has(card.queue.id))
    return "the person no longer sees this card";
  const preference = facts.preferences.get(row.queueId);
  if (!preference || preference.delivery === "off" || !preference[KIND_SWITCH[row.kind]])
    return "the person turned this notification off";
  if (row.kind !== "decision" && card.status !== "pending")
    return "the card was settled before it was sent";
  return null;
}

async function deliver(group: Notification[], now: number): Promise<boolean> {
  const rows = await claim(group, now);
  if (rows.length === 0) return false;
  const facts = await sendTimeFacts(rows);
  const skipped: Statement[] = [];
  const items: (CardItem & { row: Notification })[] = [];
  const suggestions: Notification[] = [];
  for (const row of rows) {
    const reason = reasonToSkip(row, facts);
    if (reason) {
      skipped.push(finish(row, "skipped", reason));
      continue;
    }
    if (row.kind === "suggestions" || !row.batchId) {
      suggestions.push(row);
      continue;
    }
    const batch: BatchView = facts.cards.get(row.batchId)!;
    items.push({
      row,
      kind: row.kind,
      batch,
      detail: row.detail,
      link: await cardLinkUrl(row.userId, row.batchId),
    });
  }
  // A suggestions digest is about a queue, not a card: its own message (never grouped: digest false)
  if (suggestions.length > 0) {
    const row = suggestions[0]!;
    if (skipped.length > 0) await writeBatch(skipped);
    return send(
      [{ row }],
      { to: facts.recipient!.email, ...renderSuggestionsMail(row.detail, row.queueId) },
      row,
    );
  }
  if (skipped.length > 0) {
    await writeBatch(skipped);
    metrics().notificationAttempts.inc({ result: "skipped" }, skipped.length);
  }
  if (items.length === 0) return false;

  const mail =
    items.length === 1 && !items[0]!.row.digest
      ? renderCardMail(items[0]!, facts.recipient!.timeZone)
      : renderDigestMail(items, facts.recipient!.timeZone);
  return send(items, { to: facts.recipient!.email, ...mail }, items[0]!.row);
}

/** Sends one message for `items`' rows and records the outcome on each (sent, retried, failed). */
async function send(
  items: { row: Notification }[],
  mail: Omit<OutgoingMail, "messageId">,
  first: Notification,
): Promise<boolean> {
  try {
    await sendMail({ ...mail, messageId: `<${first.id}@countersign>` });
  } catch (cause) {
    const error = cause instanceof Error ? cause.message : String(cause);
    for (const { row } of items)
      metrics().notificationAttempts.inc({
        result: row.attempts >= MAX_ATTEMPTS ? "failed" : "retry",
      });
    await writeBatch(
      items.map(({ row }) =>
        row.attempts >= MAX_ATTEMPTS
          ? finish(row, "failed", error)
          : updateRow(
              notifications,
              {
                lastError: error,
                nextAttemptAt: Date.now() + notificationRetryDelayMs(row.attempts),
              },
              "id = ? and status = 'pending'",
              row.id,
            ),
      ),
    );
    return false;
  }
  await writeBatch(items.map(({ row }) => finish(row, "sent", null)));
  metrics().notificationAttempts.inc({ result: "sent" }, items.length);
  return true;
}

function finish(row: Notification, status: "sent" | "skipped" | "failed", note: string | null) {
  return updateRow(
    notifications,
    { status, lastError: note, sentAt: status === "sent" ? Date.now() : null },
    "id = ? and status = 'pending'",
    row.id,
  );
}
