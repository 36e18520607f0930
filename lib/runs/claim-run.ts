import { and, desc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { getDb, type Executor } from "@/db/client";
import { batches, events, runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import { changedRow, updateRow, untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import {
  loadBatchView,
  loadRunView,
  runView,
  type BatchView,
  type RunView,
} from "@/lib/read-models/batch-run-views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { isoTime, newSecret, sha256Hex } from "@/lib/ids";
import { SingleLineText } from "@/lib/text/stored-text";

export const ClaimRunInput = z.object({
  workerId: SingleLineText.min(1).max(200),
  leaseSecs: z.int().min(5).max(3600).default(60),
});
export type ClaimRunInput = z.infer<typeof ClaimRunInput>;

export type RollbackAction = {
  toolCallId: string;
  revert: unknown;
  result: unknown;
  reportedAt: string;
  seq: number;
};

export type Claim = {
  claimToken: string;
  leaseExpiresAt: string;
  run: RunView;
  checkpoint: unknown;
  /** the run's latest batch, settled: what the worker resumes with */
  batch: BatchView | null;
  /** null unless a rollback was requested: then the reported actions to revert, newest first */
  rollback: RollbackAction[] | null;
};

/**
 * Takes the run for one worker: `ready` → `resuming` with a fresh token and lease. A lease that ran
 * out may be taken over. Exactly one of any number of concurrent claimers wins.
 */
export async function claimRun(actor: Actor, runId: string, body: unknown): Promise<Claim> {
  const agent = requireAgent(actor);
  const input = parseInput(ClaimRunInput, body);
  return untilWritten(async () => {
    const db = getDb();
    const run = await findRunFor(db, agent, runId);
    const now = Date.now();
    const takeover = run.status === "resuming" && (run.leaseExpiresAt ?? 0) <= now;
    if (run.status !== "ready" && !takeover) throw await notClaimable(run);
    // What the worker resumes with, read before the claim: a ready run's batches are settled.
    const [latest] = await db
      .select({ id: batches.id })
      .from(batches)
      .where(eq(batches.runId, run.id))
      .orderBy(desc(batches.createdAt), desc(batches.id))
      .limit(1);
    const batch = latest ? await loadBatchView(db, latest.id, "agent") : null;
    const rollback = run.rollbackRequestedAt ? await actionsToRevert(db, run.id) : null;

    const claimToken = newSecret("cs_claim_");
    const leaseExpiresAt = now + input.leaseSecs * 1000;
    const changes = {
      status: "resuming" as const,
      claimTokenHash: sha256Hex(claimToken),
      claimWorkerId: input.workerId,
      leaseExpiresAt,
      claimedAt: now,
      updatedAt: now,
    };
    const base = { runId: run.id, queueId: run.queueId, at: now };
    await commit([
      // The compare-and-swap: the run exactly as read. Of concurrent claimers one wins; the
      // others' batches abort, and their retries answer already_claimed.
      updateRow(
        runs,
        changes,
        "id = ? and status = ? and updated_at = ?",
        run.id,
        run.status,
        run.updatedAt,
      ),
      changedRow(),
      eventRows(
        ...(takeover
          ? [
              {
                ...base,
                type: "run.lease_expired",
                actor: SYSTEM_ACTOR,
                data: { workerId: run.claimWorkerId, leaseExpiredAt: isoTime(run.leaseExpiresAt) },
              },
            ]
          : []),
        {
          ...base,
          type: "run.claimed",
          actor: actorRef(agent),
          data: { workerId: input.workerId, leaseExpiresAt: isoTime(leaseExpiresAt) },
        },
      ),
    ]);
    return {
      claimToken,
      leaseExpiresAt: isoTime(leaseExpiresAt),
      run: runView({ ...run, ...changes }, agent.name),
      checkpoint: run.checkpoint ?? null,
      batch,
      rollback,
    };
  });
}

async function notClaimable(run: Run): Promise<ConflictError> {
  const current = await loadRunView(getDb(), run.id, { withBatches: false });
  if (run.status === "resuming") {
    return new ConflictError(
      "already_claimed",
      `Worker '${run.claimWorkerId}' holds this run until ${isoTime(run.leaseExpiresAt)}.`,
      current,
      { holder: run.claimWorkerId, leaseExpiresAt: isoTime(run.leaseExpiresAt) },
    );
  }
  if (TERMINAL_RUN_STATUSES.includes(run.status)) {
    return new ConflictError("run_terminal", `The run is ${run.status}.`, current);
  }
  return new ConflictError(
    "not_ready",
    run.status === "waiting_approval"
      ? "The run is still waiting for a decision."
      : `The run is ${run.status}; only a ready run can be claimed.`,
    current,
  );
}

/** Reported actions that carry `revert` data and were not reverted yet, newest first. */
export async function actionsToRevert(db: Executor, runId: string): Promise<RollbackAction[]> {
  return (await revertableActions(db, runId)).left;
}

/**
 * The run's reported actions that carry `revert` data: how many there are, and those not
 * reverted yet (newest first). Every one reverted means a rollback has nothing left to do.
 */
export async function revertableActions(
  db: Executor,
  runId: string,
): Promise<{ reported: number; left: RollbackAction[] }> {
  const rows = await db
    .select()
    .from(events)
    .where(
      and(eq(events.runId, runId), inArray(events.type, ["tool.completed", "action.reverted"])),
    )
    .orderBy(desc(events.seq));
  const reverted = new Set(
    rows.filter((r) => r.type === "action.reverted").map((r) => String(r.data.toolCallId)),
  );
  const revertable = rows.filter((r) => r.type === "tool.completed" && r.data.revert != null);
  const left = revertable
    .filter((r) => !reverted.has(String(r.data.toolCallId)))
    .map((r) => ({
      toolCallId: String(r.data.toolCallId),
      revert: r.data.revert,
      result: r.data.result ?? null,
      reportedAt: isoTime(r.at),
      seq: r.seq,
    }));
  return { reported: revertable.length, left };
}
