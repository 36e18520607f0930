import { and, asc, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { getDb, type Executor } from "@/db/client";
import {
  NOTIFICATION_DELIVERIES,
  notificationPreferences,
  queueMembers,
  queues,
  type NotificationKind,
  type NotificationPreference,
} from "@/db/schema";
import { guard, insertRows, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime } from "@/lib/ids";
import { emailConfigured } from "@/lib/email/transport";

// A person's notification preferences, one set per queue they belong to: how (at once, in a
// digest every N minutes, or not at all) and about what. Only one's own, and only for one's own
// queues: another queue answers 404 as if it did not exist.

export const DIGEST_MINUTES = { min: 5, max: 1440 } as const;

export const NotificationEvents = z.strictObject({
  newCards: z.boolean().describe("a new card arrives in the queue"),
  deadlines: z.boolean().describe("a pending card has a fifth of its time left"),
  escalations: z.boolean().describe("a card is escalated into the queue"),
  decisions: z.boolean().describe('a card you claimed ("I\'m reviewing this") is decided'),
  suggestions: z
    .boolean()
    .optional()
    .describe(
      "leads: a weekly email when the queue's history suggests new policy rules (default on; omitted: unchanged)",
    ),
});

export const NotificationPreferenceInput = z.strictObject({
  delivery: z.enum(NOTIFICATION_DELIVERIES),
  digestMinutes: z
    .int()
    .min(DIGEST_MINUTES.min)
    .max(DIGEST_MINUTES.max)
    .optional()
    .describe("minutes between digests (default 60); only used when delivery is digest"),
  events: NotificationEvents,
});
export type NotificationPreferenceInput = z.infer<typeof NotificationPreferenceInput>;

export type NotificationPreferenceView = {
  queue: { id: string; name: string };
  delivery: NotificationPreference["delivery"];
  digestMinutes: number;
  events: z.infer<typeof NotificationEvents>;
  /** null: never saved (the defaults: off) */
  updatedAt: string | null;
};

export type NotificationPreferenceList = {
  preferences: NotificationPreferenceView[];
  emailConfigured: boolean;
};

/** What a queue without a saved row means: nothing is sent. */
const DEFAULTS = {
  delivery: "off",
  digestMinutes: 60,
  events: {
    newCards: true,
    deadlines: true,
    escalations: true,
    decisions: true,
    suggestions: true,
  },
} as const;

/** Which preference switch lets each kind of notification through. */
export const KIND_SWITCH: Record<NotificationKind, keyof z.infer<typeof NotificationEvents>> = {
  new_card: "newCards",
  deadline: "deadlines",
  escalation: "escalations",
  decision: "decisions",
  suggestions: "suggestions",
};

function toView(
  queue: { id: string; name: string },
  row: NotificationPreference | null,
): NotificationPreferenceView {
  if (!row) return { queue, ...DEFAULTS, events: { ...DEFAULTS.events }, updatedAt: null };
  return {
    queue,
    delivery: row.delivery,
    digestMinutes: row.digestMinutes,
    events: {
      newCards: row.newCards,
      deadlines: row.deadlines,
      escalations: row.escalations,
      decisions: row.decisions,
      suggestions: row.suggestions,
    },
    updatedAt: isoTime(row.updatedAt),
  };
}

async function readPreferences(db: Executor, userId: string, queueId?: string) {
  return db
    .select({ queue: { id: queues.id, name: queues.name }, preference: notificationPreferences })
    .from(queueMembers)
    .innerJoin(queues, eq(queues.id, queueMembers.queueId))
    .leftJoin(
      notificationPreferences,
      and(
        eq(notificationPreferences.queueId, queueMembers.queueId),
        eq(notificationPreferences.userId, queueMembers.userId),
      ),
    )
    .where(
      and(
        eq(queueMembers.userId, userId),
        isNull(queues.archivedAt),
        queueId === undefined ? undefined : eq(queueMembers.queueId, queueId),
      ),
    )
    .orderBy(asc(queues.name));
}

/** `GET /me/notification-preferences`: one entry per open queue of the caller's, by queue name. */
export async function listNotificationPreferences(
  actor: Actor,
): Promise<NotificationPreferenceList> {
  const reviewer = requireReviewer(actor);
  const rows = await readPreferences(getDb(), reviewer.id);
  return {
    preferences: rows.map((r) => toView(r.queue, r.preference)),
    emailConfigured: emailConfigured(),
  };
}

/**
 * `PUT /me/notification-preferences/{queueId}`: replaces the caller's preferences for one of their
 * queues. One write batch: the upsert, guarded by the membership it relies on (someone removed
 * from the queue meanwhile gets 404 on the retry), and its event, which only its author's own
 * audit trail shows (no queue: a person's settings are nobody else's business).
 */
export async function setNotificationPreference(
  actor: Actor,
  queueId: string,
  body: unknown,
): Promise<NotificationPreferenceView> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(NotificationPreferenceInput, body);
  return untilWritten(async () => {
    const [member] = await readPreferences(getDb(), reviewer.id, queueId);
    if (!member) throw new NotFoundError("Queue");
    const now = Date.now();
    const row: NotificationPreference = {
      userId: reviewer.id,
      queueId,
      delivery: input.delivery,
      digestMinutes: input.digestMinutes ?? member.preference?.digestMinutes ?? 60,
      ...input.events,
      suggestions: input.events.suggestions ?? member.preference?.suggestions ?? true,
      updatedAt: now,
    };
    await commit([
      guard(
        "exists (select 1 from queue_members where queue_id = ? and user_id = ?)",
        queueId,
        reviewer.id,
      ),
      insertRows(
        notificationPreferences,
        [row],
        " on conflict (user_id, queue_id) do update set delivery = excluded.delivery, digest_minutes = excluded.digest_minutes, new_cards = excluded.new_cards, deadlines = excluded.deadlines, escalations = excluded.escalations, decisions = excluded.decisions, suggestions = excluded.suggestions, updated_at = excluded.updated_at",
      ),
      eventRows({
        type: "notifications.preferences_updated",
        queueId: null,
        actor: actorRef(reviewer),
        data: {
          userId: reviewer.id,
          queueId,
          delivery: row.delivery,
          digestMinutes: row.digestMinutes,
          events: { ...input.events, suggestions: row.suggestions },
        },
        at: now,
      }),
    ]);
    return toView(member.queue, row);
  });
}
