import { and, desc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Transaction } from "@/db/client";
import { batches, events, runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import { findRunFor } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, loadRunView, type BatchView, type RunView } from "@/lib/api/views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { appendEvent, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { isoTime, newSecret, sha256Hex } from "@/lib/ids";

export const ClaimRunInput = z.object({
  workerId: z.string().min(1).max(200),
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
  return transact(async (tx) => {
    const run = await findRunFor(tx, agent, runId);
    const now = Date.now();
    const takeover = run.status === "resuming" && (run.leaseExpiresAt ?? 0) <= now;
    if (run.status !== "ready" && !takeover) throw await notClaimable(tx, run);

    const claimToken = newSecret("cs_claim_");
    const leaseExpiresAt = now + input.leaseSecs * 1000;
    const [claimed] = await tx
      .update(runs)
      .set({
        status: "resuming",
        claimTokenHash: sha256Hex(claimToken),
        claimWorkerId: input.workerId,
        leaseExpiresAt,
        claimedAt: now,
        updatedAt: now,
      })
      .where(
        and(eq(runs.id, run.id), eq(runs.status, run.status), eq(runs.updatedAt, run.updatedAt)),
      )
      .returning();
    if (!claimed) throw await notClaimable(tx, run);

    if (takeover) {
      await appendEvent(tx, {
        type: "run.lease_expired",
        runId: run.id,
        queueId: run.queueId,
        actor: SYSTEM_ACTOR,
        data: { workerId: run.claimWorkerId, leaseExpiredAt: isoTime(run.leaseExpiresAt) },
        at: now,
      });
    }
    await appendEvent(tx, {
      type: "run.claimed",
      runId: run.id,
      queueId: run.queueId,
      actor: actorRef(agent),
      data: { workerId: input.workerId, leaseExpiresAt: isoTime(leaseExpiresAt) },
      at: now,
    });

    const [latest] = await tx
      .select({ id: batches.id })
      .from(batches)
      .where(eq(batches.runId, run.id))
      .orderBy(desc(batches.createdAt), desc(batches.id))
      .limit(1);
    return {
      claimToken,
      leaseExpiresAt: isoTime(leaseExpiresAt),
      run: (await loadRunView(tx, run.id, { withBatches: false }))!,
      checkpoint: claimed.checkpoint ?? null,
      batch: latest ? await loadBatchView(tx, latest.id, "agent") : null,
      rollback: claimed.rollbackRequestedAt ? await actionsToRevert(tx, run.id) : null,
    };
  });
}

async function notClaimable(tx: Transaction, run: Run): Promise<ConflictError> {
  const [fresh] = await tx.select().from(runs).where(eq(runs.id, run.id));
  const current = await loadRunView(tx, run.id, { withBatches: false });
  if (fresh!.status === "resuming") {
    return new ConflictError(
      "already_claimed",
      `Worker '${fresh!.claimWorkerId}' holds this run until ${isoTime(fresh!.leaseExpiresAt)}.`,
      current,
      { holder: fresh!.claimWorkerId, leaseExpiresAt: isoTime(fresh!.leaseExpiresAt) },
    );
  }
  if (TERMINAL_RUN_STATUSES.includes(fresh!.status)) {
    return new ConflictError("run_terminal", `The run is ${fresh!.status}.`, current);
  }
  return new ConflictError(
    "not_ready",
    fresh!.status === "waiting_approval"
      ? "The run is still waiting for a decision."
      : `The run is ${fresh!.status}; only a ready run can be claimed.`,
    current,
  );
}

/** Reported actions that carry `revert` data and were not reverted yet, newest first. */
export async function actionsToRevert(tx: Transaction, runId: string): Promise<RollbackAction[]> {
  const rows = await tx
    .select()
    .from(events)
    .where(
      and(eq(events.runId, runId), inArray(events.type, ["tool.completed", "action.reverted"])),
    )
    .orderBy(desc(events.seq));
  const reverted = new Set(
    rows.filter((r) => r.type === "action.reverted").map((r) => String(r.data.toolCallId)),
  );
  return rows
    .filter((r) => r.type === "tool.completed" && r.data.revert != null)
    .filter((r) => !reverted.has(String(r.data.toolCallId)))
    .map((r) => ({
      toolCallId: String(r.data.toolCallId),
      revert: r.data.revert,
      result: r.data.result ?? null,
      reportedAt: isoTime(r.at),
      seq: r.seq,
    }));
}
