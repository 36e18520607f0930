import { hashPassword } from "better-auth/crypto";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { personLinks, users, type PersonLinkKind } from "@/db/schema";
import {
  changedRow,
  guard,
  insertRows,
  statement,
  untilWritten,
  type Statement,
} from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { forgetCachedActors } from "@/lib/auth/actor-cache";
import { recheckCredentials } from "@/lib/auth/credential-watch";
import { ConflictError, ForbiddenError, NotFoundError } from "@/lib/errors";
import { eventRows, type EventActor } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime, newId, newSecret, sha256Hex } from "@/lib/ids";
import type { QueueCaller } from "@/lib/queues/queue-access";
import {
  findPersonFor,
  peopleManagerOf,
  issuerStillMay,
  issuerStillMayGuard,
  requireResettable,
  stillManagesPeople,
} from "./people-access";

// One-time links: an invite (set a first password) or a password reset. The token is shown once
// to whoever issued it, who hands it over; only its SHA-256 is stored. Opening the link and
// choosing a password uses it up, in one write batch with its event.

export const LINK_PREFIX = "cs_link_";
const LIFETIME_MS: Record<PersonLinkKind, number> = {
  invite: 7 * 24 * 3600_000,
  password_reset: 24 * 3600_000,
};
const PATHS: Record<PersonLinkKind, string> = {
  invite: "invite",
  password_reset: "reset-password",
};

export type IssuedLink = { url: string; expiresAt: string };

export const NewPassword = z.string().min(8, "must be at least 8 characters").max(128);

/** Ends every open (unused, unexpired) link of `userId`, of every kind, as of `now`. */
export function retireOpenLinks(userId: string, now: number): Statement {
  return statement(
    "update person_links set expires_at = ? where user_id = ? and used_at is null and expires_at > ?",
    now,
    userId,
    now,
  );
}

/**
 * The statements that issue a link for `userId` (and retire their older unused links of the same
 * kind, so only the newest works), and the link to show once.
 */
export function planLink(
  userId: string,
  kind: PersonLinkKind,
  createdBy: string | null,
  now: number,
): { writes: Statement[]; link: IssuedLink } {
  const token = newSecret(LINK_PREFIX);
  const expiresAt = now + LIFETIME_MS[kind];
  return {
    writes: [
      statement(
        "update person_links set expires_at = ? where user_id = ? and kind = ? and used_at is null and expires_at > ?",
        now,
        userId,
        kind,
        now,
      ),
      insertRows(personLinks, [
        {
          id: newId(),
          userId,
          kind,
          tokenHash: sha256Hex(token),
          createdBy,
          createdAt: now,
          expiresAt,
        },
      ]),
    ],
    link: { url: `${publicBaseUrl()}/${PATHS[kind]}/${token}`, expiresAt: isoTime(expiresAt) },
  };
}

/** `POST /people/{id}/password-reset`: a one-time reset link (admins; leads, see people-access). */
export async function issuePasswordReset(caller: QueueCaller, userId: string): Promise<IssuedLink> {
  return untilWritten(async () => {
    const db = getDb();
    const manager = await peopleManagerOf(db, caller);
    const { user, memberships } = await findPersonFor(db, manager, userId);
    requireResettable(manager, memberships);
    if (user.deactivatedAt !== null)
      throw new ForbiddenError(`${user.name} is deactivated: reactivate them first.`);
    const now = Date.now();
    const { writes, link } = planLink(userId, "password_reset", manager.reviewer?.id ?? null, now);
    await commit([
      ...stillManagesPeople(
        manager,
        memberships.map((m) => m.queueId),
      ),
      guard(`exists (select 1 from "user" where id = ? and deactivated_at is null)`, userId),
      ...writes,
      eventRows({
        type: "person.password_reset_issued",
        queueId: null,
        actor: manager.eventActor,
        data: { userId, email: user.email, expiresAt: link.expiresAt },
        at: now,
      }),
    ]);
    return link;
  });
}

/** What a link's page shows before the password is chosen; errors say why it cannot be used. */
export type LinkState = { kind: PersonLinkKind; email: string; name: string; expiresAt: string };

async function findLink(token: string) {
  const [row] = await getDb()
    .select({ link: personLinks, user: users })
    .from(personLinks)
    .innerJoin(users, eq(users.id, personLinks.userId))
    .where(eq(personLinks.tokenHash, sha256Hex(token)));
  if (!row) throw new NotFoundError("Link");
  const { link, user } = row;
  if (link.usedAt !== null)
    throw new ConflictError("link_used", "This link was already used. Ask for a new one.", null);
  if (link.expiresAt <= Date.now())
    throw new ConflictError("link_expired", "This link has expired. Ask for a new one.", null);
  if (user.deactivatedAt !== null) throw new ForbiddenError("This account is deactivated.");
  return { link, user };
}

/** The link's state, for its page: 404, or 409 `link_used` / `link_expired`. */
export async function readLink(token: string): Promise<LinkState> {
  const { link, user } = await findLink(token);
  return {
    kind: link.kind,
    email: user.email,
    name: user.name,
    expiresAt: isoTime(link.expiresAt),
  };
}

export const RedeemLinkInput = z.strictObject({
  token: z.string().min(1).max(200),
  password: NewPassword,
});

/**
 * Sets the password a link was for and uses the link up; every session of the person ends and
 * every personal token of theirs is revoked, in the same batch (a reset is often because someone
 * else held the account: a token they minted must not outlive it, issue 24). The caller signs in
 * afterwards.
 */
export async function redeemLink(input: unknown): Promise<{ email: string }> {
  const { token, password } = parseInput(RedeemLinkInput, input);
  const passwordHash = await hashPassword(password);
  const email = await untilWritten(async () => {
    const { link, user } = await findLink(token);
    // Links issued from the CLI (no issuer) stand; an issuer's must still hold (people-access.ts).
    const issuer = link.createdBy;
    if (issuer !== null && !(await issuerStillMay(getDb(), issuer, user.id)))
      throw new ForbiddenError(
        "Whoever sent this link can no longer give access to this account. Ask an admin for a new link.",
      );
    const now = Date.now();
    const actor: EventActor = { kind: "reviewer", id: user.id, name: user.name };
    await commit([
      statement(
        "update person_links set used_at = ? where id = ? and used_at is null and expires_at > ?",
        now,
        link.id,
        now,
      ),
      changedRow(),
      guard(`exists (select 1 from "user" where id = ? and deactivated_at is null)`, user.id),
      ...(issuer !== null ? [issuerStillMayGuard(issuer, user.id)] : []),
      statement(
        "update account set password = ?, updated_at = ? where user_id = ? and provider_id = 'credential'",
        passwordHash,
        now,
        user.id,
      ),
      // an invited person has no credential account yet
      statement(
        "insert into account (id, account_id, provider_id, user_id, password, created_at, updated_at)" +
          " select ?, ?, 'credential', ?, ?, ?, ? where not exists" +
          " (select 1 from account where user_id = ? and provider_id = 'credential')",
        newId(),
        user.id,
        user.id,
        passwordHash,
        now,
        now,
        user.id,
      ),
      // Whoever held the link chose this password, perhaps not the email's owner: single sign-on
      // no longer vouches for it until its holder proves both (lib/sso/sso-sign-in.ts).
      statement(`update "user" set email_verified = 0 where id = ?`, user.id),
      // An invite is moot once its owner signs in by single sign-on (which retires it too).
      ...(link.kind === "invite"
        ? [
            guard(
              "not exists (select 1 from account where user_id = ? and provider_id = 'sso')",
              user.id,
            ),
          ]
        : []),
      // The person's other open link (an invite beside a reset, or the other way round) dies
      // too: the password is set now, and whoever holds that link must not set it again.
      retireOpenLinks(user.id, now),
      statement("delete from session where user_id = ?", user.id),
      statement(
        "update reviewer_tokens set revoked_at = ? where user_id = ? and revoked_at is null",
        now,
        user.id,
      ),
      eventRows({
        type: link.kind === "invite" ? "person.invite_accepted" : "person.password_reset_used",
        queueId: null,
        actor,
        data: { userId: user.id, email: user.email },
        at: now,
      }),
    ]);
    return user.email;
  });
  // the revoked tokens' open streams end now, not at the next periodic check
  forgetCachedActors();
  void recheckCredentials();
  return { email };
}
