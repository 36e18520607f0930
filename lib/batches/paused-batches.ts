import type { ResultSet } from "@libsql/client";
import { getDb, type Database } from "@/db/client";
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
};

// Enough for the batches a busy deployment leaves waiting; older ones are read when decided.
const MAX_BATCHES = 2000;

type Held = { db: Database; byCall: Map<string, PausedBatch>; batches: Map<string, string[]> };
const state = globalThis as unknown as { __countersignPausedBatches?: Held };

function held(): Held {
  const db = getDb();
  let copy = state.__countersignPausedBatches;
  // a test that points the process at a new database starts with none
  if (!copy || copy.db !== db) state.__countersignPausedBatches = copy = freshHeld(db);
  return copy;
}

const freshHeld = (db: Database): Held => ({ db, byCall: new Map(), batches: new Map() });

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
  keepPausedBatch({
    rows: batch.rows,
    runId,
    asOfSeq: Math.max(...seqs),
    settingsVersion: batch.settings.version,
    separationOfDuties: batch.settings.queueById.get(row.batch.queueId)?.separationOfDuties ?? true,
    agentOwnerId: batch.agent.ownerUserId,
    conversationId,
  });
}

/** Keeps `paused` for the first decision on one of its calls (the oldest go first past the bound). */
export function keepPausedBatch(paused: PausedBatch): void {
  const copy = held();
  const batchId = paused.rows.batchRows[0]!.batch.id;
  forget(copy, batchId);
  if (copy.batches.size >= MAX_BATCHES) forget(copy, copy.batches.keys().next().value!);
  const callIds = paused.rows.callRows.map((r) => r.call.id);
  copy.batches.set(batchId, callIds);
  for (const id of callIds) copy.byCall.set(id, paused);
}

/**
 * The batch (of this call) as its pause left it, taken out (a batch is used once), if held.
 */
export function takePausedBatch(of: { callId: string } | { batchId: string }): PausedBatch | null {
  const copy = state.__countersignPausedBatches;
  if (!copy || copy.db !== getDb()) return null;
  const callId = "callId" in of ? of.callId : copy.batches.get(of.batchId)?.[0];
  const paused = callId === undefined ? undefined : copy.byCall.get(callId);
  if (!paused) return null;
  forget(copy, paused.rows.batchRows[0]!.batch.id);
  return paused;
}

function forget(copy: Held, batchId: string): void {
  for (const id of copy.batches.get(batchId) ?? []) copy.byCall.delete(id);
  copy.batches.delete(batchId);
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
