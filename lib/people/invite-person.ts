import { hashPassword } from "better-auth/crypto";
import { eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { accounts, QUEUE_ROLES, queueMembers, queues, users } from "@/db/schema";
import { guard, insertRows, untilWritten, type Statement } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { requireAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { loadPerson, type PersonView } from "./list-people";
import {
  peopleManagerOf,
  requireGrantable,
  sees,
  stillManagesPeople,
  type Membership,
} from "./people-access";
import { NewPassword, planLink, type IssuedLink } from "./person-links";
import { PersonName } from "./update-person";
import { SingleLineText } from "@/lib/text/stored-text";

export const InvitePersonInput = z.strictObject({
  email: z.email().transform((e) => e.toLowerCase()),
  name: PersonName,
  queues: z
    .array(
      z.strictObject({
        queueId: SingleLineText.min(1).max(200),
        role: z.enum(QUEUE_ROLES).default("reviewer"),
      }),
    )
    .max(100)
    .default([]),
  password: NewPassword.optional().describe(
    "admins only: create the account with this password instead of sending an invite link",
  ),
});
export type InvitePersonInput = z.input<typeof InvitePersonInput>;

/**
 * `POST /people`: a new person, invited by a one-time link (shown once: `invite`) or, by an admin,
 * created with a password. A lead invites only into the queues they lead, as reviewer or lead.
 * One write batch: the user, their memberships, the link (or credential) and the event.
 */
export async function invitePerson(
  caller: QueueCaller,
  body: unknown,
): Promise<{ person: PersonView; invite: IssuedLink | null }> {
  const input = parseInput(InvitePersonInput, body);
  const passwordHash = input.password ? await hashPassword(input.password) : null;
  const memberships: Membership[] = [...new Map(input.queues.map((m) => [m.queueId, m])).values()];
  const made = await untilWritten(async () => {
    const db = getDb();
    const manager = await peopleManagerOf(db, caller);
    if (passwordHash) requireAdmin(manager, "create people with a password");
    requireGrantable(manager, memberships);
    const [existing] = await db
      .select({ id: users.id })
      .from(users)
      .where(eq(users.email, input.email));
    if (existing) {
      // A lead learns nothing of people outside their queues (issue 24): no id, no name.
      if (!(await sees(db, manager, existing.id)))
        throw new ConflictError(
          "already_exists",
          "This email cannot be invited: it has an account outside the queues you lead. Ask an admin.",
          null,
        );
      throw new ConflictError("already_exists", `Someone with the email ${input.email} exists.`, {
        id: existing.id,
      });
    }
    const ids = memberships.map((m) => m.queueId);
    const open = ids.length ? await db.select().from(queues).where(inArray(queues.id, ids)) : [];
    memberships.forEach((m, i) => {
      const queue = open.find((q) => q.id === m.queueId);
      if (!queue || queue.archivedAt !== null)
        throw new InvalidRequestError(`No open queue has the id ${m.queueId}.`, [
          { path: `queues.${i}.queueId`, message: "unknown or archived queue" },
        ]);
    });

    const now = Date.now();
    const id = newId();
    const createdBy = manager.reviewer?.id ?? null;
    const writes: Statement[] = [
      ...stillManagesPeople(manager, ids),
      guard(`not exists (select 1 from "user" where email = ?)`, input.email),
      ...ids.map((queueId) =>
        guard("exists (select 1 from queues where id = ? and archived_at is null)", queueId),
      ),
      insertRows(users, [
        {
          id,
          name: input.name,
          email: input.email,
          // Not verified: whoever made this account chose the address, not its owner, and the
          // invite link is handed over by its issuer (Countersign does not email it), so whoever
          // redeems it proves nothing about the address either. Single sign-on trusts a password
          // only once its holder proves the email (issue 24, hole 2; admitToAccount in
          // lib/sso/sso-sign-in.ts).
          emailVerified: false,
          createdAt: new Date(now),
          updatedAt: new Date(now),
        },
      ]),
    ];
    if (memberships.length)
      writes.push(
        insertRows(
          queueMembers,
          memberships.map((m) => ({
            queueId: m.queueId,
            userId: id,
            role: m.role,
            createdAt: now,
          })),
        ),
      );
    let invite: IssuedLink | null = null;
    if (passwordHash) {
      writes.push(
        insertRows(accounts, [
          {
            id: newId(),
            accountId: id,
            providerId: "credential",
            userId: id,
            password: passwordHash,
            createdAt: new Date(now),
            updatedAt: new Date(now),
          },
        ]),
      );
    } else {
      const planned = planLink(id, "invite", createdBy, now);
      writes.push(...planned.writes);
      invite = planned.link;
    }
    const data = { userId: id, email: input.email, name: input.name, queues: memberships };
    writes.push(
      eventRows(
        {
          type: passwordHash ? "person.created" : "person.invited",
          queueId: null,
          actor: manager.eventActor,
          data: invite ? { ...data, expiresAt: invite.expiresAt } : data,
          at: now,
        },
        // Each queue's members learn of their new colleague on the queue's stream.
        ...memberships.map((m) => ({
          type: "member.added",
          queueId: m.queueId,
          actor: manager.eventActor,
          data: { userId: id, name: input.name, role: m.role },
          at: now,
        })),
      ),
    );
    await commit(writes);
    return { manager, id, invite };
  });
  return { person: await loadPerson(getDb(), made.manager, made.id), invite: made.invite };
}
