import { and, eq } from "drizzle-orm";
import { batches, runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import type { Transaction } from "@/db/client";
import { findRunFor } from "@/lib/api/access";
import { idempotencyFor, previousResult, rememberResult } from "@/lib/api/idempotency";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, loadRunView, type BatchView } from "@/lib/api/views";
import { requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError } from "@/lib/errors";
import { transact } from "@/lib/events/transact";
import { matchesHash } from "@/lib/ids";
import { CreateBatchInput } from "./batch-input";
import { openBatch, resolveQueue } from "./open-batch";

export { CreateBatchInput };

/**
 * Pauses a run with a new batch of calls. The run must be in the agent's hands: `running`, or
 * `resuming` under a live claim whose token is passed (the claim then ends). Anything else is a 409.
 */
export async function createBatch(
  actor: Actor,
  runId: string,
  body: unknown,
  options: { idempotencyKey?: string | null } = {},
): Promise<{ batch: BatchView; replayed: boolean }> {
  const agent = requireAgent(actor);
  const input = parseInput(CreateBatchInput, body);
  const idempotency = idempotencyFor(options.idempotencyKey, `POST /runs/${runId}/batches`, body);

  return transact(async (tx) => {
    const run = await findRunFor(tx, agent, runId);
    const earlier = await previousResult(tx, agent, idempotency, (id) =>
      loadBatchView(tx, id, "agent"),
    );
    if (earlier) return { batch: (await loadBatchView(tx, earlier, "agent"))!, replayed: true };

    await assertInAgentsHands(tx, run, input.claimToken);
    if (run.requirePlanApproval && input.kind === "action") await assertPlanApproved(tx, run);
    const choice = await resolveQueue(tx, agent, input);
    const now = Date.now();
    const [moved] = await tx
      .update(runs)
      .set({
        status: "waiting_approval",
        claimTokenHash: null,
        claimWorkerId: null,
        leaseExpiresAt: null,
        updatedAt: now,
        ...(input.checkpoint !== undefined && { checkpoint: input.checkpoint }),
      })
      .where(
        and(eq(runs.id, run.id), eq(runs.status, run.status), eq(runs.updatedAt, run.updatedAt)),
      )
      .returning();
    if (!moved) {
      throw new ConflictError(
        "not_ready",
        "The run changed while pausing; fetch it and retry.",
        await loadRunView(tx, run.id, { withBatches: false }),
      );
    }
    const batch = await openBatch(tx, agent, run, choice, input, now);
    await rememberResult(tx, agent, idempotency, batch.id);
    return { batch, replayed: false };
  });
}

async function assertInAgentsHands(tx: Transaction, run: Run, claimToken: string | undefined) {
  const current = () => loadRunView(tx, run.id, { withBatches: false });
  if (TERMINAL_RUN_STATUSES.includes(run.status)) {
    throw new ConflictError(
      "run_terminal",
      `The run is ${run.status}; start a new run.`,
      await current(),
    );
  }
  if (run.status === "running") return;
  if (run.status === "resuming") {
    const live =
      claimToken !== undefined &&
      matchesHash(claimToken, run.claimTokenHash) &&
      (run.leaseExpiresAt ?? 0) > Date.now();
    if (live) return;
    if (claimToken !== undefined) {
      throw new ConflictError(
        "claim_lost",
        "That claim is no longer live; claim the run again.",
        await current(),
      );
    }
    throw new ConflictError(
      "already_claimed",
      `The run is claimed by worker '${run.claimWorkerId}'; pass its claimToken to pause it.`,
      await current(),
      {
        holder: run.claimWorkerId,
        leaseExpiresAt: run.leaseExpiresAt ? new Date(run.leaseExpiresAt).toISOString() : null,
      },
    );
  }
  throw new ConflictError(
    "not_ready",
    run.status === "waiting_approval"
      ? "The run is already waiting for approval of another batch."
      : "The run's last batch is settled; claim the run before pausing it again.",
    await current(),
  );
}

/** A run created with requirePlanApproval takes action batches only once a plan of it is approved. */
async function assertPlanApproved(tx: Transaction, run: Run) {
  const [plan] = await tx
    .select({ id: batches.id })
    .from(batches)
    .where(
      and(eq(batches.runId, run.id), eq(batches.kind, "plan"), eq(batches.outcome, "approved")),
    )
    .limit(1);
  if (plan) return;
  throw new ConflictError(
    "plan_required",
    "This run requires an approved plan before any action: pause it with a batch of kind plan, and wait for its approval.",
    await loadRunView(tx, run.id, { withBatches: true }),
  );
}
