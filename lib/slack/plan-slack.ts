import { and, asc, eq, gt, inArray, isNotNull, lte, max } from "drizzle-orm";
import { getDb } from "@/db/client";
import {
  events,
  notificationCursors,
  queues,
  slackMessages,
  type EventRow,
  type NewSlackMessage,
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

// The Slack planner, built as the notification planner is (lib/notifications/plan-
// notifications.ts): it reads the event log after its own cursor, so posting to Slack costs the
// decision path nothing and a slow or failing Slack can never delay or fail a decision. One pass
// writes, in ONE write batch with its cursor moved by compare-and-swap:
//
// - a `slack_messages` row for each card that entered a queue with a Slack channel (created
//   there, or escalated to it): the worker (deliver-slack.ts) posts it;
// - for every event that changes what a card's messages show (a vote, a decision, an edit, the
//   deadline, a cancel, an escalation away), the event's seq as the rows' `wantedSeq`: the
//   worker brings each posted message up to date, whoever decided and wherever.
//
// The unique key (card, queue, channel) makes a second plan of the same card a no-op, so a card
// is posted once however often (and by however many processes) the planner runs.

const POSTED_TYPES = ["batch.created", "batch.escalated"];
const UPDATING_TYPES = [
  ...POSTED_TYPES,
  "call.voted",
  "call.decided",
  "call.edited",
  "batch.decided",
  "batch.expired",
  "batch.cancelled",
];
const PAGE = 500;
/** A server that had no Slack token for a while does not post its whole backlog once it has one. */
const MAX_EVENT_AGE_MS = 3600_000;

/** One pass; returns how many cards it planned to post. The first pass ever starts from now. */
export async function planSlack(now = Date.now()): Promise<number> {
  const db = getDb();
  const [cursor] = await db
    .select()
    .from(notificationCursors)
    .where(eq(notificationCursors.name, "slack"));
  const [{ last } = { last: 0 }] = await db.select({ last: max(events.seq) }).from(events);
  const lastSeq = last ?? 0;
  if (!cursor) {
    await writeBatch([
      insertRows(
        notificationCursors,
        [{ name: "slack", position: lastSeq }],
        " on conflict (name) do nothing",
      ),
    ]);
    return 0;
  }
  const from = cursor.position;
  if (lastSeq <= from) return 0;
  const rows = await db
    .select()
    .from(events)
    .where(
      and(
        gt(events.seq, from),
        lte(events.seq, lastSeq),
        inArray(events.type, UPDATING_TYPES),
        isNotNull(events.batchId),
      ),
    )
    .orderBy(asc(events.seq))
    .limit(PAGE);
  const toSeq = rows.length === PAGE ? rows[PAGE - 1]!.seq : lastSeq;

  const posts = await newPosts(
    rows.filter((r) => r.at >= now - MAX_EVENT_AGE_MS),
    now,
  );
  // the newest event of each card: its messages must show at least that much
  const newest = new Map<string, number>();
  for (const row of rows) newest.set(row.batchId!, row.seq);
  const updates = [...newest].map(([batchId, seq]) =>
    statement(
      // An idle posted message comes due now; one being posted or updated keeps its claim (the
      // worker finds it still behind when it finishes, and comes back).
      `update slack_messages set next_attempt_at = case when status = 'posted' and shown_seq >= wanted_seq then ? else next_attempt_at end, wanted_seq = max(wanted_seq, ?) where batch_id = ? and status in ('pending', 'posted')`,
      now,
      seq,
      batchId,
    ),
  );
  try {
    await writeBatch([
      statement(
        "update notification_cursors set position = ? where name = 'slack' and position = ?",
        toSeq,
        from,
      ),
      changedRow(),
      ...(posts.length > 0
        ? [
            insertRows(
              slackMessages,
              posts,
              " on conflict (batch_id, queue_id, channel_id) do nothing",
            ),
          ]
        : []),
      ...updates,
    ] satisfies Statement[]);
  } catch (error) {
    // another process planned this stretch first: its rows stand, nothing of ours was written
    if (error instanceof StateMoved) return 0;
    throw error;
  }
  return posts.length;
}

/** The cards that entered a queue with a Slack channel: created there, or escalated to it. */
async function newPosts(rows: EventRow[], now: number): Promise<NewSlackMessage[]> {
  const entered = rows.flatMap((row) => {
    if (!POSTED_TYPES.includes(row.type) || !row.queueId) return [];
    // An escalation is logged for the queue it left and the one it entered: only the latter posts.
    if (row.type === "batch.escalated") {
      const to = (row.data as { to?: { id?: string } }).to?.id;
      if (to !== row.queueId) return [];
    }
    return [{ batchId: row.batchId!, queueId: row.queueId, seq: row.seq }];
  });
  if (entered.length === 0) return [];
  const channels = new Map(
    (
      await getDb()
        .select({ id: queues.id, channel: queues.slackChannelId })
        .from(queues)
        .where(
          and(
            inArray(queues.id, [...new Set(entered.map((e) => e.queueId))]),
            isNotNull(queues.slackChannelId),
          ),
        )
    ).map((q) => [q.id, q.channel!]),
  );
  return entered.flatMap(({ batchId, queueId, seq }) => {
    const channelId = channels.get(queueId);
    if (!channelId) return [];
    return [
      {
        id: newId(),
        batchId,
        queueId,
        channelId,
        status: "pending" as const,
        nextAttemptAt: now,
        wantedSeq: seq,
        createdAt: now,
      },
    ];
  });
}
