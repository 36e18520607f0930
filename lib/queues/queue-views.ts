import { and, asc, eq, inArray, sql, type SQL } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { z } from "zod";
import type { Executor } from "@/db/client";
import { queueMembers, queues, users } from "@/db/schema";
import type {
  QueueDetailResource,
  QueueMemberResource,
  QueueResource,
} from "@/lib/read-models/resource-schemas";
import { isoTime } from "@/lib/ids";
import { canManage, type Manager } from "./queue-access";

export type QueueView = z.infer<typeof QueueResource>;
export type QueueMemberView = z.infer<typeof QueueMemberResource>;
export type QueueDetailView = z.infer<typeof QueueDetailResource>;

const escalation = alias(queues, "escalation");

/** Queues as the caller sees them (their role, what they may do), open ones first, then by name. */
export async function loadQueueViews(
  db: Executor,
  manager: Manager,
  queueIds: string[],
): Promise<QueueView[]> {
  if (queueIds.length === 0) return [];
  const callerId = manager.reviewer?.id ?? null;
  const rows = await db
    .select({
      queue: queues,
      escalationName: escalation.name,
      memberCount: sql<number>`(select count(*) from ${queueMembers} where ${queueMembers.queueId} = ${queues.id})`,
      role: sql<
        string | null
      >`(select ${queueMembers.role} from ${queueMembers} where ${queueMembers.queueId} = ${queues.id} and ${queueMembers.userId} = ${callerId})`,
    })
    .from(queues)
    .leftJoin(escalation, eq(escalation.id, queues.escalationQueueId))
    .where(inArray(queues.id, queueIds))
    .orderBy(sql`${queues.archivedAt} is not null`, asc(queues.name));
  return rows.map(({ queue, escalationName, memberCount, role }) => {
    const queueRole = role as QueueView["access"]["role"];
    return {
      id: queue.id,
      name: queue.name,
      requiredApprovals: queue.requiredApprovals,
      separationOfDuties: queue.separationOfDuties,
      claimMode: queue.claimMode,
      defaultTimeoutSecs: queue.defaultTimeoutSecs,
      approveOnTimeout: queue.approveOnTimeout,
      approveOnTimeoutMinSecs: queue.approveOnTimeoutMinSecs,
      slackChannelId: queue.slackChannelId,
      escalationQueueId: queue.escalationQueueId,
      escalationQueue:
        queue.escalationQueueId && escalationName !== null
          ? { id: queue.escalationQueueId, name: escalationName }
          : null,
      memberCount: Number(memberCount),
      createdAt: isoTime(queue.createdAt),
      archivedAt: isoTime(queue.archivedAt),
      access: {
        role: queueRole,
        canManage: canManage(manager, queueRole),
        isAdmin: manager.isAdmin,
      },
    };
  });
}

export async function loadQueueView(
  db: Executor,
  manager: Manager,
  queueId: string,
): Promise<QueueView> {
  const [view] = await loadQueueViews(db, manager, [queueId]);
  return view!;
}

async function selectMembers(db: Executor, where: SQL | undefined): Promise<QueueMemberView[]> {
  const rows = await db
    .select({
      userId: users.id,
      name: users.name,
      email: users.email,
      role: queueMembers.role,
      addedAt: queueMembers.createdAt,
    })
    .from(queueMembers)
    .innerJoin(users, eq(users.id, queueMembers.userId))
    .where(where)
    .orderBy(
      sql`case ${queueMembers.role} when 'admin' then 0 when 'lead' then 1 else 2 end`,
      asc(users.name),
    );
  return rows.map((row) => ({ ...row, addedAt: isoTime(row.addedAt) }));
}

/** A queue's members, admins first, then leads, then reviewers, each by name. */
export function loadMembers(db: Executor, queueId: string): Promise<QueueMemberView[]> {
  return selectMembers(db, eq(queueMembers.queueId, queueId));
}

export async function loadMember(
  db: Executor,
  queueId: string,
  userId: string,
): Promise<QueueMemberView | null> {
  const [member] = await selectMembers(
    db,
    and(eq(queueMembers.queueId, queueId), eq(queueMembers.userId, userId)),
  );
  return member ?? null;
}

export async function loadQueueDetail(
  db: Executor,
  manager: Manager,
  queueId: string,
): Promise<QueueDetailView> {
  return {
    ...(await loadQueueView(db, manager, queueId)),
    members: await loadMembers(db, queueId),
  };
}
