import { eq } from "drizzle-orm";
import { z } from "zod";
import { getDb, type Executor } from "@/db/client";
import { users } from "@/db/schema";
import { changedRow, statement, untilWritten } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { actorRef, requireReviewer, type Actor } from "@/lib/auth/actor";
import { NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { TimeZoneName } from "@/lib/time/zone";

// A person's own settings (`GET/PATCH /me`): today the time zone every time is shown to them in,
// on every page and in their emails. Only one's own: there is no way to name someone else.

export const UpdateMySettingsInput = z
  .strictObject({
    timeZone: TimeZoneName.nullable()
      .optional()
      .describe(
        "the zone every time is shown in (pages and emails); null: follow the browser's zone; absent: unchanged",
      ),
    shortcutsEnabled: z
      .boolean()
      .optional()
      .describe(
        "whether single-key shortcuts (a approves, r rejects, …) act in the queue; false turns them all off (WCAG 2.1.4); absent: unchanged",
      ),
  })
  .refine((input) => input.timeZone !== undefined || input.shortcutsEnabled !== undefined, {
    message: "Give timeZone or shortcutsEnabled (or both).",
  });
export type UpdateMySettingsInput = z.input<typeof UpdateMySettingsInput>;

export type MySettings = {
  id: string;
  name: string;
  email: string;
  /** their own choice; null: pages follow the browser's zone, emails are in UTC */
  timeZone: string | null;
  /** single-key shortcuts act in the queue (default true) */
  shortcutsEnabled: boolean;
};

/** The stored override, or null (also for a zone this runtime no longer knows). */
export async function personTimeZone(db: Executor, userId: string): Promise<string | null> {
  const [row] = await db
    .select({ timeZone: users.timeZone })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  return row?.timeZone ?? null;
}

async function readSettings(db: Executor, userId: string): Promise<MySettings> {
  const [row] = await db
    .select({
      id: users.id,
      name: users.name,
      email: users.email,
      timeZone: users.timeZone,
      shortcutsEnabled: users.shortcutsEnabled,
    })
    .from(users)
    .where(eq(users.id, userId))
    .limit(1);
  if (!row) throw new NotFoundError("Person");
  return row;
}

/** `GET /me` */
export async function getMySettings(actor: Actor): Promise<MySettings> {
  return readSettings(getDb(), requireReviewer(actor).id);
}

/**
 * `PATCH /me`: one write batch, the update (still active: a person deactivated meanwhile changes
 * nothing) and its event, which names no queue: a person's settings are nobody else's business.
 */
export async function updateMySettings(actor: Actor, body: unknown): Promise<MySettings> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(UpdateMySettingsInput, body);
  return untilWritten(async () => {
    const before = await readSettings(getDb(), reviewer.id);
    const after: MySettings = {
      ...before,
      timeZone: input.timeZone === undefined ? before.timeZone : input.timeZone,
      shortcutsEnabled: input.shortcutsEnabled ?? before.shortcutsEnabled,
    };
    const changes: Record<string, { before: unknown; after: unknown }> = {};
    if (after.timeZone !== before.timeZone) {
      changes.timeZone = { before: before.timeZone, after: after.timeZone };
    }
    if (after.shortcutsEnabled !== before.shortcutsEnabled) {
      changes.shortcutsEnabled = { before: before.shortcutsEnabled, after: after.shortcutsEnabled };
    }
    if (Object.keys(changes).length === 0) return before;
    const now = Date.now();
    await commit([
      // Conditional on what was read: a concurrent change of either setting aborts and re-reads.
      statement(
        `update "user" set time_zone = ?, shortcuts_enabled = ?, updated_at = ?
         where id = ? and deactivated_at is null and time_zone is ? and shortcuts_enabled = ?`,
        after.timeZone,
        after.shortcutsEnabled ? 1 : 0,
        now,
        reviewer.id,
        before.timeZone,
        before.shortcutsEnabled ? 1 : 0,
      ),
      changedRow(),
      eventRows({
        type: "person.settings_updated",
        queueId: null,
        actor: actorRef(reviewer),
        data: { userId: reviewer.id, ...changes },
        at: now,
      }),
    ]);
    return after;
  });
}
