import { getDb } from "@/db/client";
import { managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { loadViews, type SavedViewResult } from "./view-access";

/** The saved views of the caller's open queues, by queue name then view name. */
export async function listViews(caller: QueueCaller): Promise<{ views: SavedViewResult[] }> {
  const db = getDb();
  const manager = await managerOf(db, caller);
  return { views: await loadViews(db, manager, {}) };
}
