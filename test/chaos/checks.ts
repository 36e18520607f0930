import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import type { Decision, Follower, Pause } from "./load";
import { sleep } from "../support/polling";

// The invariants, read straight from the database file the servers share (the runner has it open
// too). Each check returns the failures it found, as sentences for the report; none means it held.

const rows = <T>(query: ReturnType<typeof sql>) => getDb().all<T>(query);

/** Every acknowledged pause and decision is in the database, as acknowledged. */
export async function acknowledgedWritesPresent(
  pauses: Pause[],
  decisions: Decision[],
): Promise<string[]> {
  const failures: string[] = [];
  const calls = new Map(
    (
      await rows<{
        id: string;
        batch_id: string;
        decision_outcome: string | null;
        decided_by: string | null;
      }>(sql`select id, batch_id, decision_outcome, decided_by from calls`)
    ).map((c) => [c.id, c]),
  );
  for (const pause of pauses) {
    if (calls.get(pause.callId)?.batch_id !== pause.batchId)
      failures.push(`acknowledged pause ${pause.externalId} (batch ${pause.batchId}) is missing`);
  }
  for (const decision of decisions) {
    const call = calls.get(decision.callId);
    if (call?.decision_outcome !== decision.outcome || call.decided_by !== decision.reviewerId)
      failures.push(
        `acknowledged decision on call ${decision.callId} (${decision.outcome}) is not what the database holds (${call?.decision_outcome ?? "none"})`,
      );
  }
  return failures;
}

/** Pauses refused with 503 left nothing behind (no run with their externalId). */
export async function refusedPausesAbsent(externalIds: string[]): Promise<string[]> {
  if (externalIds.length === 0) return [];
  const present = await rows<{ external_id: string }>(
    sql`select external_id from runs where external_id in (${sql.join(
      externalIds.map((id) => sql`${id}`),
      sql`, `,
    )})`,
  );
  return present.map((r) => `pause ${r.external_id} was answered 503 but its run exists`);
}

/**
 * Nothing half-written and nothing stuck: each state change's rows and its event came together,
 * and no batch or run waits for something that already happened.
 */
export async function logConsistent(): Promise<string[]> {
  const checks: [string, ReturnType<typeof sql>][] = [
    [
      "runs without exactly one run.created event",
      sql`select count(*) as n from runs r where (select count(*) from events e where e.run_id = r.id and e.type = 'run.created') <> 1`,
    ],
    [
      "batches without exactly one batch.created event",
      sql`select count(*) as n from batches b where (select count(*) from events e where e.batch_id = b.id and e.type = 'batch.created') <> 1`,
    ],
    [
      "decided calls without exactly one call.decided event",
      sql`select count(*) as n from calls c where c.status in ('approved','rejected') and (select count(*) from events e where e.call_id = c.id and e.type = 'call.decided') <> 1`,
    ],
    [
      "pending calls with a call.decided event",
      sql`select count(*) as n from calls c where c.status = 'pending' and exists (select 1 from events e where e.call_id = c.id and e.type = 'call.decided')`,
    ],
    [
      "decided batches without exactly one batch.decided event",
      sql`select count(*) as n from batches b where b.status = 'decided' and (select count(*) from events e where e.batch_id = b.id and e.type = 'batch.decided') <> 1`,
    ],
    [
      "stuck batches (pending, with no call left pending)",
      sql`select count(*) as n from batches b where b.status = 'pending' and not exists (select 1 from calls c where c.batch_id = b.id and c.status = 'pending')`,
    ],
    [
      "stuck runs (waiting_approval, with no batch pending)",
      sql`select count(*) as n from runs r where r.status = 'waiting_approval' and not exists (select 1 from batches b where b.run_id = r.id and b.status = 'pending')`,
    ],
  ];
  const failures: string[] = [];
  for (const [what, query] of checks) {
    const [row] = await rows<{ n: number }>(query);
    if (Number(row?.n) > 0) failures.push(`${row!.n} ${what}`);
  }
  return failures;
}

export async function integrityCheck(): Promise<string> {
  const result = await rows<{ integrity_check: string }>(sql`pragma integrity_check`);
  return result.map((r) => r.integrity_check).join("; ");
}

/** The queue's events in the log, in seq order. */
export async function loggedSeqs(queueId: string): Promise<number[]> {
  const result = await rows<{ seq: number }>(
    sql`select seq from events where queue_id = ${queueId} order by seq`,
  );
  return result.map((r) => Number(r.seq));
}

export type StreamCheck = {
  streams: number;
  eventsChecked: number;
  gaps: number;
  duplicates: number;
  reconnects: number;
  failures: string[];
};

/**
 * Waits until every follower has caught up with the log, then compares: each must have received
 * exactly the queue's logged events, in order (they all replayed from 0).
 */
export async function streamsMatchLog(
  followers: { label: string; follower: Follower }[],
  queueId: string,
  timeoutMs = 15_000,
): Promise<StreamCheck> {
  const logged = await loggedSeqs(queueId);
  const deadline = Date.now() + timeoutMs;
  while (
    Date.now() < deadline &&
    followers.some(({ follower }) => (follower.ids().at(-1) ?? 0) < (logged.at(-1) ?? 0))
  )
    await sleep(50);
  const result: StreamCheck = {
    streams: followers.length,
    eventsChecked: 0,
    gaps: 0,
    duplicates: 0,
    reconnects: 0,
    failures: [],
  };
  for (const { label, follower } of followers) {
    const ids = follower.ids();
    const seen = new Set(ids);
    const duplicates = ids.length - seen.size;
    const outOfOrder = ids.some((id, i) => i > 0 && id <= ids[i - 1]!);
    const gaps = logged.filter((seq) => !seen.has(seq)).length;
    const extra = ids.filter((id) => !logged.includes(id)).length;
    result.eventsChecked += ids.length;
    result.gaps += gaps;
    result.duplicates += duplicates;
    result.reconnects += follower.reconnects();
    if (gaps || duplicates || outOfOrder || extra || follower.resyncs())
      result.failures.push(
        `stream ${label}: ${gaps} missing, ${duplicates} duplicated, ${extra} not in the log, ${outOfOrder ? "out of order" : "in order"}, ${follower.resyncs()} resyncs (got ${ids.length}, log has ${logged.length})`,
      );
  }
  return result;
}
