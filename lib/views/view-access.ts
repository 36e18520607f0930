import { and, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "@/db/client";
import { queueMembers, queues, savedViews, users, type SavedView } from "@/db/schema";
import type { SavedViewResource } from "@/lib/read-models/resource-schemas";
import { NotFoundError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";
import { canManage, roleIn, type Manager } from "@/lib/queues/queue-access";
import { SingleLineText } from "@/lib/text/stored-text";

// Saved views belong to a queue and are shared by its members. Unlike queue settings, an
// installation admin gets no view of queues they are not in: the views filter the queue page,
// which only shows the reviewer's own queues.

export const ViewFilters = z.strictObject({
  agent: SingleLineText.trim().min(1).max(200).optional(),
  tool: SingleLineText.trim().min(1).max(200).optional(),
  kind: z.enum(["action", "plan"]).optional(),
  status: z.enum(["pending", "decided", "cancelled", "all"]).optional(),
});
export type ViewFilters = z.infer<typeof ViewFilters>;

export type SavedViewResult = z.infer<typeof SavedViewResource>;

/** The caller's role in a queue they belong to; 404 when they are not a member (or it is missing). */
export async function memberRole(db: Executor, manager: Manager, queueId: string) {
  const role = manager.reviewer ? await roleIn(db, queueId, manager.reviewer.id) : null;
  if (role === null) throw new NotFoundError("Queue");
  return role;
}

/** The creator, or a lead or admin of its queue. */
export function canDeleteView(
  manager: Manager,
  role: Parameters<typeof canManage>[1],
  view: Pick<SavedView, "createdBy">,
): boolean {
  return view.createdBy === manager.reviewer?.id || canManage(manager, role);
}

/** Views with their queue and creator, as the caller sees them. */
export async function loadViews(
  db: Executor,
  manager: Manager,
  where: { viewId?: string },
): Promise<SavedViewResult[]> {
  const userId = manager.reviewer?.id ?? "";
  const rows = await db
    .select({
      view: savedViews,
      queueName: queues.name,
      creatorName: users.name,
      role: queueMembers.role,
    })
    .from(savedViews)
    .innerJoin(queues, eq(queues.id, savedViews.queueId))
    .innerJoin(
      queueMembers,
      and(eq(queueMembers.queueId, savedViews.queueId), eq(queueMembers.userId, userId)),
    )
    .innerJoin(users, eq(users.id, savedViews.createdBy))
    // One view is found in an archived queue too (to delete it); the list shows open queues only.
    .where(where.viewId === undefined ? isNull(queues.archivedAt) : eq(savedViews.id, where.viewId))
    .orderBy(queues.name, savedViews.name);
  return rows.map(({ view, queueName, creatorName, role }) =>
    toResource(view, queueName, creatorName, canDeleteView(manager, role, view)),
  );
}

export function toResource(
  view: SavedView,
  queueName: string,
  creatorName: string,
  canDelete: boolean,
): SavedViewResult {
  return {
    id: view.id,
    name: view.name,
    queue: { id: view.queueId, name: queueName },
    filters: view.filters as ViewFilters,
    createdBy: { id: view.createdBy, name: creatorName },
    createdAt: isoTime(view.createdAt),
    canDelete,
  };
}
