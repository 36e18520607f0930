import { getDb } from "@/db/client";
import { runs, TERMINAL_RUN_STATUSES, type Run } from "@/db/schema";
import { changedRow, updateRow } from "@/db/write-batch";
import { assertSameRequest, idempotencyFor } from "@/lib/input/idempotency";
import { parseInput } from "@/lib/input/parse";
import { loadBatchView, loadRunView, type BatchView } from "@/lib/read-models/batch-run-views";
import { requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { commit } from "@/lib/events/commit";
import { matchesHash } from "@/lib/ids";
import { rememberPausedBatch } from "./paused-batches";
import { checkCallbackTargetResolves } from "@/lib/webhooks/callback-target";
import { CreateBatchInput } from "./batch-input";
import {
  chooseQueue,
  idempotencyRecord,
  planOpenBatch,
  readPauseContext,
  untilPaused,
} from "./open-batch";

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
  await checkCallbackTargetResolves(input.callbackUrl, "callbackUrl");
  const idempotency = idempotencyFor(options.idempotencyKey, `POST /runs/${runId}/batches`, body);

  return untilPaused(async (read) => {
    const db = getDb();
    const context = await readPauseContext(agent, { runId, idempotency, batch: input }, read);
    const run = context.run;
    // Another agent's run is answered exactly like a missing one.
    if (!run || run.agentKeyId !== agent.id) throw new NotFoundError("Run");
    if (context.earlier) {
      const earlier = await loadBatchView(db, context.earlier.resourceId, "agent");
      assertSameRequest(idempotency!, context.earlier, earlier);
      return { batch: earlier!, replayed: true };
    }

    await assertInAgentsHands(run, input.claimToken);
    if (run.requirePlanApproval && input.kind === "action" && !context.planApproved) {
      throw new ConflictError(
        "plan_required",
        "This run requires an approved plan before any action: pause it with a batch of kind plan, and wait for its approval.",
        await loadRunView(db, run.id, { withBatches: true }),
      );
    }
    const choice = chooseQueue(agent, context, input);
    const now = Date.now();
    const opened = planOpenBatch(agent, run, choice, context, input, now);
    const statements = [
      // The compare-and-swap: the run as it was read (same status, no change since).
      updateRow(
        runs,
        {
          status: "waiting_approval",
          claimTokenHash: null,
          claimWorkerId: null,
          leaseExpiresAt: null,
          updatedAt: now,
          ...(input.checkpoint !== undefined && { checkpoint: input.checkpoint }),
        },
        "id = ? and status = ? and updated_at = ?",
        run.id,
        run.status,
        run.updatedAt,
      ),
      changedRow(),
      ...opened.writes,
      ...idempotencyRecord(agent, idempotency, opened.view.id, now),
    ];
    const results = await commit(statements);
    rememberPausedBatch(
      { statements, results },
      { rows: opened.rows, settings: context.settings, agent },
      run.conversationId,
    );
    return { batch: opened.view, replayed: false };
  });
}

async function assertInAgentsHands(run: Run, claimToken: string | undefined) {
  const current = () => loadRunView(getDb(), run.id, { withBatches: false });
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
