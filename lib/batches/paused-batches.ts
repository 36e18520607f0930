import type { ResultSet } from "@libsql/client";
import { getTableName } from "drizzle-orm";
import { getDb, type Database } from "@/db/client";
import { batches, calls } from "@/db/schema";
import { guard, type Statement } from "@/db/write-batch";
import type { AgentActor } from "@/lib/auth/actor";
import { eventsWritten } from "@/lib/events/append-event";
import type { BatchViewRows } from "@/lib/read-models/batch-run-views";
import type { PauseSettings } from "./pause-settings";

// A batch as the pause that made it left it, kept in this process so that the first reviewer's
// decision on it need not read it back (over a libSQL server that read is a round trip of its
// own, a third of a decision's cost to the server). A decision planned from it
// (lib/approvals/decide-call.ts) carries `pausedBatchGuard` in its write batch: the write lands
// only if nothing of the run was logged since the pause (every change to a batch, its calls,
// votes, claims, set-asides or queue writes an event of its run: lib/README.md, invariant 2), the
// queues and rules are as they were (a queue's separation of duties, say) and so is the agent key
// (its name is in the batch's view, its owner in separation of duties). Otherwise it aborts,
// writes nothing, and the decision is planned again from a fresh read.
//
// Each batch is used once: the first decision takes it out, whatever happens next.

export type PausedBatch = {
  /** the batch, its calls and (none yet) votes, as the pause built its view from them */
  rows: BatchViewRows;
  runId: string;
  /** the seq of the pause's last event of this run: a later one means the batch may have moved */
  asOfSeq: number;
  settingsVersion: number;
  separationOfDuties: boolean;
  agentOwnerId: string | null;
  conversationId: string | null;
  /** about how much memory it holds: the length of the rows' text as its pause wrote them */
  size: number;
};

// Bounds: enough for the batches a busy deployment leaves waiting, and never much memory (a
// call's args may be megabytes: such a batch is not kept at all). The oldest go first; a batch
// not held is read when decided, as always.
const MAX_BATCHES = 2000;
const MAX_TOTAL_SIZE = 16 * 1024 * 1024;
const MAX_BATCH_SIZE = 64 * 1024;

// how insertRows (db/write-batch.ts) begins the pause's writes of the rows held
const INSERT_CALLS = `insert into "${getTableName(calls)}"`;
const INSERT_BATCHES = `insert into "${getTableName(batches)}"`;

type Held = {
  db: Database;
  byCall: Map<string, PausedBatch>;
  /** batch id → the batch; a Map iterates in insertion order, so the first is the oldest */
  batches: Map<string, PausedBatch>;
  size: number;
};
const state = globalThis as unknown as { __countersignPausedBatches?: Held };

function held(): Held {
  const db = getDb();
  let copy = state.__countersignPausedBatches;
  // a test that points the process at a new database starts with none
  if (!copy || copy.db !== db) state.__countersignPausedBatches = copy = freshHeld(db);
  return copy;
}

const freshHeld = (db: Database): Held => ({ db, byCall: new Map(), batches: new Map(), size: 0 });

/**
 * Keeps a batch a pause just committed (`statements` and their `results`), if it waits for a
 * reviewer. `rows` are taken as they are: the pause no longer changes them.
 */
export function rememberPausedBatch(
  pause: { statements: Statement[]; results: ResultSet[] },
  batch: { rows: BatchViewRows; settings: PauseSettings; agent: AgentActor },
  conversationId: string | null,
): void {
  const [row] = batch.rows.batchRows;
  if (!row || row.batch.status !== "pending") return;
  const runId = row.batch.runId;
  const seqs = eventsWritten(pause.statements, pause.results)
    .filter((event) => event.runId === runId)
    .map((event) => event.seq);
  if (seqs.length === 0) return;
  // the text of the batch's and calls' rows (their args, schemas and plans are what the rows hold)
  let size = 0;
  for (const statement of pause.statements)
    if (statement.sql.startsWith(INSERT_CALLS) || statement.sql.startsWith(INSERT_BATCHES))
      for (const arg of statement.args) if (typeof arg === "string") size += arg.length;
  keepPausedBatch({
    rows: batch.rows,
    runId,
    asOfSeq: Math.max(...seqs),
    settingsVersion: batch.settings.version,
    separationOfDuties: batch.settings.queueById.get(row.batch.queueId)?.separationOfDuties ?? true,
    agentOwnerId: batch.agent.ownerUserId,
    conversationId,
    size,
  });
}

/** Keeps `paused` for the first decision on one of its calls, within the bounds above. */
export function keepPausedBatch(paused: PausedBatch): void {
  if (paused.size > MAX_BATCH_SIZE) return;
  const copy = held();
  forget(copy, paused.rows.batchRows[0]!.batch.id);
  while (
    copy.batches.size > 0 &&
    (copy.batches.size >= MAX_BATCHES || copy.size + paused.size > MAX_TOTAL_SIZE)
  )
    forget(copy, copy.batches.keys().next().value!);
  copy.batches.set(paused.rows.batchRows[0]!.batch.id, paused);
  copy.size += paused.size;
  for (const { call } of paused.rows.callRows) copy.byCall.set(call.id, paused);
}

/** How many batches this process holds, and about how much memory (for tests). */
export function pausedBatchesHeld(): { batches: number; size: number } {
  const copy = state.__countersignPausedBatches;
  return copy && copy.db === getDb()
    ? { batches: copy.batches.size, size: copy.size }
    : { batches: 0, size: 0 };
}

/**
 * The batch (of this call) as its pause left it, taken out (a batch is used once), if held.
 */
export function takePausedBatch(of: { callId: string } | { batchId: string }): PausedBatch | null {
  const copy = state.__countersignPausedBatches;
  if (!copy || copy.db !== getDb()) return null;
  const paused = "callId" in of ? copy.byCall.get(of.callId) : copy.batches.get(of.batchId);
  if (!paused) return null;
  forget(copy, paused.rows.batchRows[0]!.batch.id);
  return paused;
}

function forget(copy: Held, batchId: string): void {
  const paused = copy.batches.get(batchId);
  if (!paused) return;
  for (const { call } of paused.rows.callRows) copy.byCall.delete(call.id);
  copy.batches.delete(batchId);
  copy.size -= paused.size;
}

/**
 * Aborts a decision's write batch planned from `paused` unless nothing of its run was logged
 * since the pause, the queues and rules are unchanged, and the agent key has the name and owner
 * the batch's view and separation of duties were planned with. Put first: the decision's own
 * events come after it.
 */
export function pausedBatchGuard(paused: PausedBatch): Statement {
  const row = paused.rows.batchRows[0]!;
  return guard(
    "not exists (select 1 from events where run_id = ? and seq > ?)" +
      " and exists (select 1 from pause_settings_version where version = ?)" +
      " and exists (select 1 from agent_keys where id = ? and name = ? and owner_user_id is ?)",
    paused.runId,
    paused.asOfSeq,
    paused.settingsVersion,
    row.agentId,
    row.agentName,
    paused.agentOwnerId,
  );
}
