import { getDb } from "@/db/client";
import { findQueueFor, managerOf, type QueueCaller } from "./queue-access";
import {
  loadMembers,
  loadQueueDetail,
  type QueueDetailView,
  type QueueMemberView,
} from "./queue-views";

/** A queue's settings and members, for its members and installation admins (404 for anyone else). */
export async function getQueue(caller: QueueCaller, queueId: string): Promise<QueueDetailView> {
  const db = getDb();
  const manager = await managerOf(db, caller);
  await findQueueFor(db, manager, queueId);
  return loadQueueDetail(db, manager, queueId);
}

export async function listMembers(
  caller: QueueCaller,
  queueId: string,
): Promise<{ members: QueueMemberView[] }> {
  const db = getDb();
  const manager = await managerOf(db, caller);
  await findQueueFor(db, manager, queueId);
  return { members: await loadMembers(db, queueId) };
}
