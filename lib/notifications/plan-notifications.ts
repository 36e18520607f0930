import { and, asc, eq, gt, inArray, isNull, lte, max, min, ne, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import {
  batches,
  events,
  notificationCursors,
  notificationPreferences,
  notifications,
  queueMembers,
  users,
  type EventRow,
  type NewNotification,
  type NotificationKind,
  type NotificationPreference,
} from "@/db/schema";
import {
  changedRow,
  insertRows,
  statement,
  StateMoved,
  writeBatch,
  type Statement,
} from "@/db/write-batch";
import { newId } from "@/lib/ids";
import { KIND_SWITCH } from "./preferences";
import { setting } from "@/lib/config/settings";

// The notification planner: turns what happened into outbox rows (lib/notifications/deliver-
// notifications.ts sends them). It reads the event log after a cursor rather than having the
// decision path write notifications itself: a decision, a pause or an escalation then costs not
// one more read (whose preferences? who claimed it?) nor one more row inside its write lock,
// whatever the number of subscribers, and a bug or a slow query here can never fail or slow a
// decision. The price is a delay of one poll (NOTIFY_POLL_MS), which email does not notice.
//
// Exactly once: each pass writes its notifications and moves its cursor in ONE write batch, the
// cursor by compare-and-swap, so a crash loses no event and a pass that raced another process's
// writes nothing (StateMoved; the next pass starts from the moved cursor). The unique key
// (event, person, channel) is the second lock on the door: an event can never be planned twice.
//
// Deadlines approaching are not events: a second cursor (a time) finds the pending cards whose
// last fifth of time began since the previous pass.

/** The events that can notify anyone. */
const PLANNED_TYPES = ["batch.created", "batch.escalated", "batch.decided", "batch.expired"];
const PAGE = 500;
/**
 * Events older than this are passed over: a server that sent no email for a while (SMTP_URL
 * unset, or the planner stopped) does not mail its whole backlog once it starts again.
 */
const MAX_EVENT_AGE_MS = 3600_000;
/** A deadline is "approaching" once this share of the card's time is left. */
const DEADLINE_SHARE_LEFT = 0.2;

type Cursor = "events" | "deadlines";

/** One thing that happened, for the members of one queue (or some of them). */
type Happening = {
  eventKey: string;
  kind: NotificationKind;
  batchId: string;
  queueId: string;
  detail: Record<string, unknown>;
  /** only these people (the claimers of a decided card); undefined: every subscribed member */
  only?: Set<string>;
};

/** How long a digest gathers: `minutes` (NOTIFY_DIGEST_UNIT_MS shortens a minute in tests). */
export function digestPeriodMs(minutes: number): number {
  return minutes * setting("NOTIFY_DIGEST_UNIT_MS");
}

async function readCursors(): Promise<Partial<Record<Cursor, number>>> {
  const rows = await getDb().select().from(notificationCursors);
  return Object.fromEntries(rows.map((r) => [r.name, r.position]));
}

const moveCursor = (name: Cursor, from: number, to: number): Statement[] => [
  statement(
    "update notification_cursors set position = ? where name = ? and position = ?",
    to,
    name,
    from,
  ),
  changedRow(),
];

/**
 * One pass: plans what happened since the last pass and moves the cursors. Returns how many
 * notifications it wrote. The first pass ever starts from now: history is not mailed.
 */
export async function planNotifications(now = Date.now()): Promise<number> {
  const db = getDb();
  const cursors = await readCursors();
  const [{ last } = { last: 0 }] = await db.select({ last: max(events.seq) }).from(events);
  const lastSeq = last ?? 0;
  if (cursors.events === undefined || cursors.deadlines === undefined) {
    await writeBatch([
      insertRows(
        notificationCursors,
        [
          { name: "events", position: lastSeq },
          { name: "deadlines", position: now },
        ],
        " on conflict (name) do nothing",
      ),
    ]);
    return 0;
  }
  const stored = { events: cursors.events, deadlines: cursors.deadlines };
  const planned = await db
    .select()
    .from(events)
    .where(
      and(
        gt(events.seq, stored.events),
        lte(events.seq, lastSeq),
        inArray(events.type, PLANNED_TYPES),
      ),
    )
    .orderBy(asc(events.seq))
    .limit(PAGE);
  // A full page: stop after its last row, the rest is the next pass's.
  const toSeq = planned.length === PAGE ? planned[PAGE - 1]!.seq : lastSeq;
  const happenings = [
    ...(await fromEvents(planned.filter((row) => row.at >= now - MAX_EVENT_AGE_MS))),
    ...(await deadlinesBetween(stored.deadlines, now)),
  ];
  const rows = await notificationRows(happenings, now);
  // Nothing to write and no event passed: no write at all (the deadline window simply grows
  // until the next pass that writes; the same cards cross it either way).
  if (rows.length === 0 && toSeq === stored.events) return 0;
  return commitPlan(stored, toSeq, now, rows);
}

async function commitPlan(
  stored: Record<Cursor, number>,
  toSeq: number,
  now: number,
  rows: NewNotification[],
): Promise<number> {
  const inserts: Statement[] = [];
  for (let i = 0; i < rows.length; i += 200)
    inserts.push(
      insertRows(
        notifications,
        rows.slice(i, i + 200),
        " on conflict (event_key, user_id, channel) do nothing",
      ),
    );
  try {
    await writeBatch([
      ...moveCursor("events", stored.events, toSeq),
      // never backwards, should this process's clock be behind the one that moved it last
      ...moveCursor("deadlines", stored.deadlines, Math.max(stored.deadlines, now)),
      ...inserts,
    ]);
  } catch (error) {
    // Another process planned this stretch first: its rows stand, nothing of ours was written.
    if (error instanceof StateMoved) return 0;
    throw error;
  }
  return rows.length;
}

async function fromEvents(rows: EventRow[]): Promise<Happening[]> {
  const happenings: Happening[] = [];
  for (const row of rows) {
    // A batch that policy settled whole is logged with no queue: no reviewer ever sees it.
    if (!row.batchId || !row.queueId) continue;
    const base = { eventKey: `event:${row.seq}`, batchId: row.batchId, queueId: row.queueId };
    if (row.type === "batch.created") {
      happenings.push({ ...base, kind: "new_card", detail: {} });
    } else if (row.type === "batch.escalated") {
      // Written once for the queue it left and once for the one it entered: only the latter's
      // members are told.
      const data = row.data as { from?: { name?: string }; to?: { id?: string } };
      if (data.to?.id !== row.queueId) continue;
      happenings.push({ ...base, kind: "escalation", detail: { from: data.from?.name ?? null } });
    } else {
      const claimers = await claimersOf(row);
      if (claimers.size === 0) continue;
      const outcome = (row.data as { outcome?: string }).outcome ?? "decided";
      happenings.push({
        ...base,
        kind: "decision",
        detail: {
          outcome: row.type === "batch.expired" ? `${outcome} at the deadline` : outcome,
          by: row.actorKind === "reviewer" ? row.actorName : null,
        },
        only: claimers,
      });
    }
  }
  return happenings;
}

/** Who claimed the card ("I'm reviewing this") before it was decided, but did not decide it. */
async function claimersOf(decided: EventRow): Promise<Set<string>> {
  const rows = await getDb()
    .selectDistinct({ userId: events.actorId })
    .from(events)
    .where(
      and(
        eq(events.runId, decided.runId!),
        eq(events.batchId, decided.batchId!),
        eq(events.type, "review.claimed"),
        lte(events.seq, decided.seq),
      ),
    );
  return new Set(rows.flatMap((r) => (r.userId && r.userId !== decided.actorId ? [r.userId] : [])));
}

/**
 * Pending cards whose last fifth of time began in (from, to]. That moment is
 * expiresAt − 0.2 × (expiresAt − createdAt), compared here multiplied by 5 to stay in integers.
 * An escalated card has a new deadline, so it can be announced again (its key counts escalations).
 */
async function deadlinesBetween(from: number, to: number): Promise<Happening[]> {
  if (to <= from) return [];
  const share = 1 / DEADLINE_SHARE_LEFT;
  const moment = sql`(${batches.expiresAt} * ${share - 1} + ${batches.createdAt})`;
  const rows = await getDb()
    .select({ id: batches.id, queueId: batches.queueId, escalations: batches.escalations })
    .from(batches)
    .where(
      and(
        eq(batches.status, "pending"),
        gt(batches.expiresAt, to),
        eq(batches.hiddenFromReviewers, false),
        sql`${moment} > ${from * share} and ${moment} <= ${to * share}`,
      ),
    );
  return rows.map((b) => ({
    eventKey: `deadline:${b.id}:${b.escalations}`,
    kind: "deadline" as const,
    batchId: b.id,
    queueId: b.queueId,
    detail: {},
  }));
}

/** The outbox rows: each happening for each member of its queue whose preferences ask for it. */
async function notificationRows(happenings: Happening[], now: number): Promise<NewNotification[]> {
  if (happenings.length === 0) return [];
  const queueIds = [...new Set(happenings.map((h) => h.queueId))];
  const subscribed = await getDb()
    .select({ preference: notificationPreferences })
    .from(notificationPreferences)
    .innerJoin(
      queueMembers,
      and(
        eq(queueMembers.queueId, notificationPreferences.queueId),
        eq(queueMembers.userId, notificationPreferences.userId),
      ),
    )
    .innerJoin(users, eq(users.id, notificationPreferences.userId))
    .where(
      and(
        inArray(notificationPreferences.queueId, queueIds),
        ne(notificationPreferences.delivery, "off"),
        isNull(users.deactivatedAt),
      ),
    );
  // A person's first digest notification opens a digest, due `digestMinutes` later; what comes
  // before then joins it (rows not yet tried: one being sent is closed to newcomers).
  const digestUsers = [
    ...new Set(
      subscribed.flatMap((s) => (s.preference.delivery === "digest" ? [s.preference.userId] : [])),
    ),
  ];
  const openDigests = new Map(
    digestUsers.length === 0
      ? []
      : (
          await getDb()
            .select({ userId: notifications.userId, dueAt: min(notifications.nextAttemptAt) })
            .from(notifications)
            .where(
              and(
                inArray(notifications.userId, digestUsers),
                eq(notifications.status, "pending"),
                eq(notifications.digest, true),
                eq(notifications.attempts, 0),
              ),
            )
            .groupBy(notifications.userId)
        ).map((r) => [r.userId, r.dueAt!]),
  );
  const dueAt = (p: NotificationPreference) => {
    if (p.delivery !== "digest") return now;
    let due = openDigests.get(p.userId);
    if (due === undefined) openDigests.set(p.userId, (due = now + digestPeriodMs(p.digestMinutes)));
    return due;
  };
  const byQueue = new Map<string, NotificationPreference[]>();
  for (const { preference } of subscribed)
    byQueue.set(preference.queueId, [...(byQueue.get(preference.queueId) ?? []), preference]);

  return happenings.flatMap((happening) =>
    (byQueue.get(happening.queueId) ?? [])
      .filter((p) => p[KIND_SWITCH[happening.kind]])
      .filter((p) => !happening.only || happening.only.has(p.userId))
      .map((p) => ({
        id: newId(),
        eventKey: happening.eventKey,
        userId: p.userId,
        channel: "email" as const,
        kind: happening.kind,
        batchId: happening.batchId,
        queueId: happening.queueId,
        digest: p.delivery === "digest",
        detail: happening.detail,
        status: "pending" as const,
        nextAttemptAt: dueAt(p),
        createdAt: now,
      })),
  );
}
