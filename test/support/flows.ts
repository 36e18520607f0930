import { and, asc, gt, inArray, max } from "drizzle-orm";
import { getDb } from "@/db/client";
import { events, type EventRow } from "@/db/schema";
import { refundBatch, type ApiClient } from "./http";

// Short agent and reviewer flows over the real API, and a direct look at the event log (the test
// process has the same database file open as the servers it starts).

/** An agent starts a run paused at once on a one-call batch; returns the run and its batch. */
export async function pauseNewRun(
  agent: ApiClient,
  batch: Record<string, unknown> = refundBatch(),
) {
  const response = await agent.post("/runs", { batch });
  if (response.status !== 201)
    throw new Error(`POST /runs answered ${response.status}: ${JSON.stringify(response.body)}`);
  const run = response.body;
  return { run, batch: run.batches[0] };
}

/** A reviewer approves (or rejects) one call at its current revision; throws unless 200. */
export async function decideOverApi(
  reviewer: ApiClient,
  call: { id: string; revision: number },
  outcome: "approve" | "reject" = "approve",
) {
  const response = await reviewer.post(`/calls/${call.id}/decision`, {
    outcome,
    expectedRevision: call.revision,
  });
  if (response.status !== 200) {
    throw new Error(
      `Deciding call ${call.id} answered ${response.status}: ${JSON.stringify(response.body)}`,
    );
  }
  return response.body as { call: any; batch: any };
}

/** The events of `queueIds` after `afterSeq`, in log order, as the database holds them. */
export async function loggedEvents(afterSeq: number, queueIds: string[]): Promise<EventRow[]> {
  return getDb()
    .select()
    .from(events)
    .where(and(gt(events.seq, afterSeq), inArray(events.queueId, queueIds)))
    .orderBy(asc(events.seq));
}

/** The newest `seq` in the log (0 when it is empty). */
export async function newestSeq(): Promise<number> {
  const [row] = await getDb()
    .select({ seq: max(events.seq) })
    .from(events);
  return row?.seq ?? 0;
}
