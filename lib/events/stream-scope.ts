import { and, eq, inArray } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events, type EventRow } from "@/db/schema";
import { findRunFor } from "@/lib/access/find-for-caller";
import { requireReviewer, reviewerQueueIds, type Actor } from "@/lib/auth/actor";
import { NotFoundError } from "@/lib/errors";
import { queueFilter, type StreamFilter } from "./open-stream";

/** `GET /stream`: the events of the named queues (all of the reviewer's when none is named). */
export async function queueStreamFilter(actor: Actor, requested: string[]): Promise<StreamFilter> {
  const reviewer = requireReviewer(actor);
  const memberOf = await reviewerQueueIds(getDb(), reviewer.id);
  for (const queueId of requested)
    if (!memberOf.includes(queueId)) throw new NotFoundError(`Queue '${queueId}'`);
  const queueIds = requested.length > 0 ? [...new Set(requested)] : memberOf;
  return { ...queueFilter(queueIds), endsAfter: membershipChanged(reviewer.id, queueIds) };
}

const MEMBERSHIP_EVENTS = new Set(["member.added", "member.removed", "member.role_changed"]);

/** The reviewer joined or left a queue, or one of their queues was archived. */
function membershipChanged(userId: string, queueIds: string[]) {
  const queues = new Set(queueIds);
  return (row: EventRow) =>
    (MEMBERSHIP_EVENTS.has(row.type) && (row.data as { userId?: unknown }).userId === userId) ||
    (row.type === "queue.archived" && row.queueId !== null && queues.has(row.queueId));
}

/** `GET /runs/{id}/stream`: the run's events — all of them for its agent, a reviewer's queues' for a reviewer. */
export async function runStreamFilter(actor: Actor, runId: string): Promise<StreamFilter> {
  const run = await findRunFor(getDb(), actor, runId);
  if (actor.kind === "agent") {
    return {
      where: eq(events.runId, run.id),
      visible: (row) => row.runId === run.id,
      shareKey: `run:${run.id}`,
    };
  }
  const memberOf = await reviewerQueueIds(getDb(), actor.id);
  const queues = new Set(memberOf);
  return {
    where: and(eq(events.runId, run.id), inArray(events.queueId, memberOf)),
    visible: (row) => row.runId === run.id && row.queueId !== null && queues.has(row.queueId),
    shareKey: `run:${run.id};queues:${[...queues].sort().join(",")}`,
    endsAfter: membershipChanged(actor.id, memberOf),
  };
}
