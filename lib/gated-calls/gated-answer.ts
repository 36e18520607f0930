import { and, eq, gte, isNull, ne, sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { preparedRead } from "@/db/prepared-read";
import { batches, calls, runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import { changedRow, guard, updateRow, type Statement } from "@/db/write-batch";
import { loadRunView, type BatchView } from "@/lib/read-models/batch-run-views";
import { actorRef, type AgentActor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";

// What the verbs of an MCP gateway's calls share: the answer's shape, the run they are recorded
// on (a gateway session's run stays `running`: its calls are batches that never make it wait, so
// one waiting for a person holds up none of the others), and the use of a decision (once).

export type GatedDecision = "allow" | "deny" | "ask";

/** What a gateway is told about one governed call. */
export type GatedCallAnswer = {
  /** allow: forward (with `decision.editedArgs` when a reviewer edited it); deny: never forward; ask: wait on `batch` */
  decision: GatedDecision;
  /** the call this answer is about: an earlier call's when its decision was picked up */
  callId: string;
  /** answered from an earlier identical call's card (a gateway restarted, a client that gave up) */
  pickedUp: boolean;
  batch: BatchView;
};

export function gatedAnswer(batch: BatchView, callId: string, pickedUp: boolean): GatedCallAnswer {
  const call = batch.calls.find((c) => c.id === callId)!;
  const decision: GatedDecision =
    call.status === "approved" ? "allow" : call.status === "pending" ? "ask" : "deny";
  return { decision, callId, pickedUp, batch };
}

/** The session's run must be the agent's (else 404, found by the caller) and `running`. */
export async function assertGatewayRun(run: Run): Promise<void> {
  if (run.status === "running") return;
  const current = await loadRunView(getDb(), run.id, { withBatches: false });
  if (TERMINAL_RUN_STATUSES.includes(run.status))
    throw new ConflictError("run_terminal", `The run is ${run.status}; start a new run.`, current);
  throw new ConflictError(
    "not_ready",
    `The run is ${run.status}: a gateway's calls are recorded on a run that is running (one that was never paused).`,
    current,
  );
}

/** The write's condition that the session's run is still running (it was read so). */
export const runStillRunning = (runId: string): Statement =>
  guard("exists (select 1 from runs where id = ? and status = 'running')", runId);

/**
 * The writes that use a settled gateway call's decision for the session's run `runId`: the
 * compare-and-swap on `used_at` (a second use, from a replay or a racing gateway, aborts the
 * batch) and its `call.used` event on the run that used it.
 */
export function planUse(
  agent: AgentActor,
  runId: string,
  batch: BatchView,
  callId: string,
  now: number,
): Statement[] {
  const call = batch.calls.find((c) => c.id === callId)!;
  return [
    runStillRunning(runId),
    updateRow(
      calls,
      { usedAt: now },
      "id = ? and used_at is null and status = ? and revision = ?",
      call.id,
      call.status,
      call.revision,
    ),
    changedRow(),
    eventRows({
      type: "call.used",
      runId,
      batchId: batch.id,
      callId: call.id,
      // the run page shows it; the card's queue saw the decision itself already
      queueId: null,
      actor: actorRef(agent),
      data: {
        toolName: call.toolName,
        outcome: call.decision?.outcome ?? "rejected",
        status: call.status,
        fromRunId: batch.runId,
      },
      at: now,
    }),
  ];
}

/**
 * How long after its card was made an unused decision may still be picked up by an identical
 * call: long enough for a gateway restarted the same day, short enough that an approval left
 * unused is not spent weeks later in another conversation.
 */
export const PICKUP_WINDOW_MS = 24 * 3600_000;

/**
 * The oldest call of this agent's gateway, with these arguments, whose decision nobody used:
 * made within the pick-up window (`since`), in the queue the new call would go to now (`queueId`,
 * routing and policy evaluated now), so a card is never spent under another queue's reviewers.
 */
export const unusedCallRead = preparedRead((db) =>
  db
    .select({ id: calls.id, batchId: calls.batchId, status: calls.status })
    .from(calls)
    .innerJoin(runs, eq(runs.id, calls.runId))
    .innerJoin(batches, eq(batches.id, calls.batchId))
    .where(
      and(
        eq(calls.gateway, sql.placeholder("gateway")),
        eq(calls.actionHash, sql.placeholder("actionHash")),
        isNull(calls.usedAt),
        ne(calls.status, "cancelled"),
        eq(runs.agentKeyId, sql.placeholder("agentId")),
        eq(batches.queueId, sql.placeholder("queueId")),
        gte(batches.createdAt, sql.placeholder("since")),
      ),
    )
    // a decided card first (its decision is what the call comes back for), then one still waiting
    .orderBy(sql`${calls.status} = 'pending'`, calls.decidedAt, calls.id)
    .limit(1)
    .prepare(),
);
