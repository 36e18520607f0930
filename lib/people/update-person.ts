import { and, eq, isNull, ne } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { queueMembers, users } from "@/db/schema";
import { changedRow, statement, untilWritten, updateRow, type Statement } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { ConflictError, ForbiddenError } from "@/lib/errors";
import { eventRows, type NewEvent } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { requireAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { loadPerson, type PersonView } from "./list-people";
import { findPersonFor, peopleManagerOf, stillManagesPeople } from "./people-access";
import { SingleLineText } from "@/lib/text/stored-text";
import { retireOpenLinks } from "./person-links";

export const PersonName = SingleLineText.trim().min(1).max(100);

export const UpdatePersonInput = z
  .strictObject({
    name: PersonName.optional().describe("rename (admins): past decisions keep the old name"),
    active: z
      .boolean()
      .optional()
      .describe(
        "false deactivates (admins): sign-in refused, sessions ended, personal tokens revoked",
      ),
  })
  .refine((input) => input.name !== undefined || input.active !== undefined, {
    message: "give a name or active",
  });
export type UpdatePersonInput = z.input<typeof UpdatePersonInput>;

/** An admin other than this person remains active (no installation without an admin). */
const ANOTHER_ACTIVE_ADMIN =
  "exists (select 1 from queue_members m join \"user\" u on u.id = m.user_id where m.role = 'admin' and u.id <> ? and u.deactivated_at is null)";

/**
 * `PATCH /people/{id}` (admins): rename, deactivate or reactivate, each one write batch with its
 * event. The update carries what was read (the old name, the active state), so of two admins at
 * once the second is answered from the first one's result.
 */
export async function updatePerson(
  caller: QueueCaller,
  userId: string,
  body: unknown,
): Promise<PersonView> {
  const input = parseInput(UpdatePersonInput, body);
  const person = await untilWritten(async () => {
    const db = getDb();
    const manager = await peopleManagerOf(db, caller);
    requireAdmin(manager, "rename, deactivate or reactivate people");
    const { user, memberships } = await findPersonFor(db, manager, userId);
    const now = Date.now();
    const writes: Statement[] = [];
    const events: NewEvent[] = [];
    const about = { userId, email: user.email };

    if (input.name !== undefined && input.name !== user.name) {
      writes.push(
        updateRow(
          users,
          { name: input.name, updatedAt: new Date(now) },
          "id = ? and name = ?",
          userId,
          user.name,
        ),
        changedRow(),
      );
      events.push({
        type: "person.renamed",
        queueId: null,
        actor: manager.eventActor,
        data: { ...about, before: user.name, after: input.name },
        at: now,
      });
    }
    const active = user.deactivatedAt === null;
    if (input.active === false && active) {
      if (manager.reviewer?.id === userId)
        throw new ForbiddenError("You cannot deactivate yourself; ask another admin.");
      const isAdmin = memberships.some((m) => m.role === "admin");
      writes.push(
        statement(
          `update "user" set deactivated_at = ? where id = ? and deactivated_at is null${isAdmin ? ` and ${ANOTHER_ACTIVE_ADMIN}` : ""}`,
          now,
          userId,
          ...(isAdmin ? [userId] : []),
        ),
        changedRow(),
        // Signed out everywhere and every personal token revoked, in the same batch: nothing of
        // theirs authenticates once this commits (open streams re-check their credential).
        statement("delete from session where user_id = ?", userId),
        statement(
          "update reviewer_tokens set revoked_at = ? where user_id = ? and revoked_at is null",
          now,
          userId,
        ),
        // …and every open invite or reset link retired: one issued before, kept, would set the
        // password once they are reactivated (issue 24).
        retireOpenLinks(userId, now),
      );
      if (isAdmin) await refuseLastActiveAdmin(userId, user.name);
      events.push({
        type: "person.deactivated",
        queueId: null,
        actor: manager.eventActor,
        data: about,
        at: now,
      });
    } else if (input.active === true && !active) {
      writes.push(
        statement(
          `update "user" set deactivated_at = null where id = ? and deactivated_at = ?`,
          userId,
          user.deactivatedAt,
        ),
        changedRow(),
      );
      events.push({
        type: "person.reactivated",
        queueId: null,
        actor: manager.eventActor,
        data: about,
        at: now,
      });
    }
    if (writes.length > 0)
      await commit([...stillManagesPeople(manager, []), ...writes, eventRows(...events)]);
    return { manager, userId };
  });
  // A reviewer token's actor carries the name, and a deactivated person's must stop at once.
  forgetCachedActors();
  return loadPerson(getDb(), person.manager, person.userId);
}

/** The read's answer to deactivating the last active admin; the write re-checks it. */
async function refuseLastActiveAdmin(userId: string, name: string): Promise<void> {
  const [other] = await getDb()
    .select({ id: users.id })
    .from(queueMembers)
    .innerJoin(users, eq(users.id, queueMembers.userId))
    .where(and(eq(queueMembers.role, "admin"), ne(users.id, userId), isNull(users.deactivatedAt)))
    .limit(1);
  if (!other)
    throw new ConflictError(
      "last_admin",
      `${name} is the last active admin of this installation: make someone else an admin first.`,
      null,
    );
}
