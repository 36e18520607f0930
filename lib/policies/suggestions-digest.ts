import { and, eq, isNull, ne, or } from "drizzle-orm";
import { getDb } from "@/db/client";
import {
  notificationPreferences,
  notifications,
  policySuggestionDigests,
  queueMembers,
  queues,
  users,
  type NewNotification,
} from "@/db/schema";
import { guard, insertRows, StateMoved, writeBatch } from "@/db/write-batch";
import { newId } from "@/lib/ids";
import { DAY_MS } from "./policy-input";
import {
  DEFAULT_MIN_APPROVALS,
  dismissedFingerprints,
  mineQueueSuggestions,
} from "./suggest-policies";

// The weekly email to a queue's leads when its history suggests policy rules they have not heard
// of yet. Planned like the other notifications (lib/notifications): rows in the notification
// outbox, for the leads whose preferences for the queue have email on and `suggestions` set, sent
// by the same worker. Each queue is mined at most once a week; what it announced is remembered
// (id and fingerprint), so a suggestion is mailed once, and again only when its evidence changes.
// The week's run and its outbox rows are one write batch, its time moved by compare-and-swap, so
// two processes never mail a queue's week twice.

export const DIGEST_EVERY_MS = 7 * DAY_MS;
const PERIOD_MS = 30 * DAY_MS;

/** One pass over the open queues whose week is up; returns how many notifications it wrote. */
export async function planSuggestionDigests(now = Date.now()): Promise<number> {
  const db = getDb();
  const due = await db
    .select({
      id: queues.id,
      name: queues.name,
      ranAt: policySuggestionDigests.ranAt,
      announced: policySuggestionDigests.announced,
    })
    .from(queues)
    .leftJoin(policySuggestionDigests, eq(policySuggestionDigests.queueId, queues.id))
    .where(isNull(queues.archivedAt));
  let written = 0;
  for (const queue of due) {
    if (queue.ranAt !== null && queue.ranAt > now - DIGEST_EVERY_MS) continue;
    written += await planQueue(queue, now);
  }
  return written;
}

async function planQueue(
  queue: { id: string; name: string; ranAt: number | null; announced: string[] | null },
  now: number,
): Promise<number> {
  const db = getDb();
  const [mined, dismissed] = await Promise.all([
    mineQueueSuggestions(queue.id, { from: now - PERIOD_MS, to: now }, DEFAULT_MIN_APPROVALS),
    dismissedFingerprints(queue.id),
  ]);
  const offered = mined.filter((s) => dismissed.get(s.id) !== s.fingerprint);
  const keys = offered.map((s) => `${s.id}:${s.fingerprint}`);
  const known = new Set(queue.announced ?? []);
  const fresh = offered.filter((_, i) => !known.has(keys[i]!));
  const leads = fresh.length
    ? await db
        .select({ userId: notificationPreferences.userId })
        .from(notificationPreferences)
        .innerJoin(
          queueMembers,
          and(
            eq(queueMembers.userId, notificationPreferences.userId),
            or(
              and(eq(queueMembers.queueId, queue.id), eq(queueMembers.role, "lead")),
              eq(queueMembers.role, "admin"),
            ),
          ),
        )
        .innerJoin(users, eq(users.id, notificationPreferences.userId))
        .where(
          and(
            eq(notificationPreferences.queueId, queue.id),
            ne(notificationPreferences.delivery, "off"),
            eq(notificationPreferences.suggestions, true),
            isNull(users.deactivatedAt),
          ),
        )
    : [];
  const userIds = [...new Set(leads.map((l) => l.userId))];
  const rows: NewNotification[] = userIds.map((userId) => ({
    id: newId(),
    eventKey: `suggestions:${queue.id}:${now}`,
    userId,
    channel: "email",
    kind: "suggestions",
    batchId: null,
    queueId: queue.id,
    digest: false,
    detail: {
      queue: queue.name,
      suggestions: fresh.map((s) => ({
        tool: s.rule.toolPattern,
        conditions: s.rule.argPredicates,
        approved: s.trial.approved,
      })),
    },
    status: "pending",
    nextAttemptAt: now,
    createdAt: now,
  }));
  try {
    await writeBatch([
      // this week's run is ours only if nobody ran it since we read
      guard(
        queue.ranAt === null
          ? "not exists (select 1 from policy_suggestion_digests where queue_id = ?)"
          : "exists (select 1 from policy_suggestion_digests where queue_id = ? and ran_at = ?)",
        ...(queue.ranAt === null ? [queue.id] : [queue.id, queue.ranAt]),
      ),
      insertRows(
        policySuggestionDigests,
        [
          {
            queueId: queue.id,
            ranAt: now,
            announced: [...new Set([...known, ...keys])].slice(-1000),
          },
        ],
        " on conflict (queue_id) do update set ran_at = excluded.ran_at, announced = excluded.announced",
      ),
      ...(rows.length
        ? [insertRows(notifications, rows, " on conflict (event_key, user_id, channel) do nothing")]
        : []),
    ]);
  } catch (error) {
    if (error instanceof StateMoved) return 0;
    throw error;
  }
  return rows.length;
}

/** Whether `userId` may still read the queue's suggestions (its lead, or an admin). */
export async function stillLeads(userId: string, queueId: string): Promise<boolean> {
  const rows = await getDb()
    .select({ role: queueMembers.role })
    .from(queueMembers)
    .where(
      and(
        eq(queueMembers.userId, userId),
        or(
          and(eq(queueMembers.queueId, queueId), eq(queueMembers.role, "lead")),
          eq(queueMembers.role, "admin"),
        ),
      ),
    );
  return rows.length > 0;
}
