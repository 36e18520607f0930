import { and, eq, inArray, isNull } from "drizzle-orm";
import { getDb } from "@/db/client";
import { queueMembers, queues, users } from "@/db/schema";
import { changedRow, guard, statement, untilWritten, type Statement } from "@/db/write-batch";
import type { EventActor } from "@/lib/events/append-event";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { stillOpen } from "@/lib/queues/queue-access";
import type { SsoGroupRole } from "./sso-settings";
import { VOUCHED_SQL } from "./vouched";

/** Who the membership events name: the identity provider, through the admin's mapping. */
export const SSO_EVENT_ACTOR: EventActor = { kind: "system", id: null, name: "Single sign-on" };

const RANK = { reviewer: 1, lead: 2, admin: 3 } as const;

/** The groups a claim holds: a list of names, or one name (some providers send a string). */
export function groupsOf(claim: unknown): string[] {
  if (typeof claim === "string") return [claim];
  if (Array.isArray(claim)) return claim.filter((g): g is string => typeof g === "string");
  return [];
}

/**
 * At each single sign-on: the queue roles the person's identity-provider groups map to. A role is
 * granted or raised (reviewer → lead), never lowered or taken away here: a membership may have
 * been granted by an admin too, and the mapping cannot tell; taking access away is done on the
 * People page (deactivation) or the queue's members. One write batch: every change with its
 * condition (the membership as read, the queue still open) and its member.* event.
 * Returns how many memberships changed.
 */
export async function applyGroupRoles(
  userId: string,
  groups: string[],
  mappings: SsoGroupRole[],
): Promise<number> {
  // The highest role each queue gets from the person's groups.
  const wanted = new Map<string, "reviewer" | "lead">();
  for (const m of mappings) {
    if (!groups.includes(m.group)) continue;
    const before = wanted.get(m.queueId);
    if (!before || RANK[m.role] > RANK[before]) wanted.set(m.queueId, m.role);
  }
  if (wanted.size === 0) return 0;
  return untilWritten(async () => {
    const db = getDb();
    const queueIds = [...wanted.keys()];
    const [user] = await db
      .select({ name: users.name })
      .from(users)
      .where(and(eq(users.id, userId), isNull(users.deactivatedAt)));
    if (!user) return 0;
    const open = await db
      .select({ id: queues.id })
      .from(queues)
      .where(and(inArray(queues.id, queueIds), isNull(queues.archivedAt)));
    const memberships = new Map(
      (
        await db
          .select({ queueId: queueMembers.queueId, role: queueMembers.role })
          .from(queueMembers)
          .where(and(eq(queueMembers.userId, userId), inArray(queueMembers.queueId, queueIds)))
      ).map((m) => [m.queueId, m.role]),
    );
    const now = Date.now();
    const writes: Statement[] = [];
    let changes = 0;
    for (const { id: queueId } of open) {
      const role = wanted.get(queueId)!;
      const current = memberships.get(queueId);
      if (current && RANK[current] >= RANK[role]) continue;
      changes++;
      writes.push(
        stillOpen(queueId),
        current
          ? statement(
              "update queue_members set role = ? where queue_id = ? and user_id = ? and role = ?",
              role,
              queueId,
              userId,
              current,
            )
          : statement(
              "insert into queue_members (queue_id, user_id, role, created_at) select ?, ?, ?, ? where not exists (select 1 from queue_members where queue_id = ? and user_id = ?)",
              queueId,
              userId,
              role,
              now,
              queueId,
              userId,
            ),
        changedRow(),
        eventRows(
          current
            ? {
                type: "member.role_changed",
                queueId,
                actor: SSO_EVENT_ACTOR,
                at: now,
                data: { userId, name: user.name, before: current, after: role, source: "sso" },
              }
            : {
                type: "member.added",
                queueId,
                actor: SSO_EVENT_ACTOR,
                at: now,
                data: { userId, name: user.name, role, source: "sso" },
              },
        ),
      );
    }
    if (changes === 0) return 0;
    await commit([
      guard(`exists (select 1 from "user" where id = ? and deactivated_at is null)`, userId),
      // Never into a password someone else may hold (sso-sign-in.ts, admitToAccount): checked
      // again here, in the write, should one have been set since the sign-in was admitted.
      guard(VOUCHED_SQL, userId),
      ...writes,
    ]);
    return changes;
  });
}
