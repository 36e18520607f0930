import { z } from "zod";
import { getDb } from "@/db/client";
import { runs, type Run, type RunOrigin } from "@/db/schema";
import { insertRows } from "@/db/write-batch";
import { assertSameRequest, idempotencyFor } from "@/lib/input/idempotency";
import { parseInput } from "@/lib/input/parse";
import { loadRunView, runView, type RunView } from "@/lib/read-models/batch-run-views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { CreateBatchInput } from "@/lib/batches/batch-input";
import {
  chooseQueue,
  idempotencyRecord,
  planOpenBatch,
  readPauseContext,
  untilPaused,
} from "@/lib/batches/open-batch";
import { rememberPausedBatch } from "@/lib/batches/paused-batches";
import { pauseSettingsGuard } from "@/lib/batches/pause-settings";
import { ConflictError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { newId } from "@/lib/ids";
import { checkCallbackTargetResolves } from "@/lib/webhooks/callback-target";
import { SingleLineText } from "@/lib/text/stored-text";

export const CreateRunInput = z.object({
  externalId: SingleLineText.min(1).max(200).optional(),
  conversationId: SingleLineText.min(1).max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** the run's first pause, created in the same transaction */
  batch: CreateBatchInput.optional(),
  /** refuse the run's action batches (409 plan_required) until a plan batch of it is approved */
  requirePlanApproval: z.boolean().default(false),
});
export type CreateRunInput = z.infer<typeof CreateRunInput>;

/**
 * Starts a run for the calling agent, optionally paused at once with its first batch: one write
 * batch, after a read batch only when this process holds no copy of the queues and rules or the
 * agent asks for remembered approvals of its conversation (open-batch.ts, `untilPaused`).
 */
export async function createRun(
  actor: Actor,
  body: unknown,
  options: { idempotencyKey?: string | null; origin?: RunOrigin } = {},
): Promise<{ run: RunView; replayed: boolean }> {
  const agent = requireAgent(actor);
  // Every field is optional, so no body at all means the same as `{}` (retries included).
  const request = body ?? {};
  const input = parseInput(CreateRunInput, request);
  await checkCallbackTargetResolves(input.batch?.callbackUrl, "batch.callbackUrl");
  const idempotency = idempotencyFor(options.idempotencyKey, "POST /runs", request);
  const withBatches = input.batch !== undefined;

  return untilPaused(async (read) => {
    const db = getDb();
    const context = await readPauseContext(
      agent,
      { conversationId: input.conversationId, idempotency, batch: input.batch },
      read,
    );
    if (context.earlier) {
      const earlier = await loadRunView(db, context.earlier.resourceId, { withBatches });
      assertSameRequest(idempotency!, context.earlier, earlier);
      return { run: earlier!, replayed: true };
    }
    if (input.requirePlanApproval && input.batch && input.batch.kind !== "plan") {
      throw new ConflictError(
        "plan_required",
        "This run requires an approved plan first: pause it with a batch of kind plan.",
        null,
      );
    }
    const choice = chooseQueue(agent, context, input.batch);
    const now = Date.now();
    const run: Run = {
      id: newId(),
      agentKeyId: agent.id,
      queueId: choice.queue.id,
      externalId: input.externalId ?? null,
      conversationId: input.conversationId ?? null,
      status: input.batch ? "waiting_approval" : "running",
      metadata: input.metadata ?? null,
      checkpoint: input.batch?.checkpoint ?? null,
      claimTokenHash: null,
      claimWorkerId: null,
      leaseExpiresAt: null,
      claimedAt: null,
      requirePlanApproval: input.requirePlanApproval,
      rollbackRequestedAt: null,
      rollbackReason: null,
      origin: options.origin ?? "api",
      result: null,
      error: null,
      createdAt: now,
      updatedAt: now,
    };
    const opened = input.batch
      ? planOpenBatch(agent, run, choice, context, input.batch, now)
      : null;
    const statements = [
      // A run without a batch is in its queue too: planned from the same settings, guarded on
      // them as a pause's batch is (open-batch.ts).
      ...(opened ? [] : [pauseSettingsGuard(context.settings)]),
      insertRows(runs, [run]),
      eventRows({
        type: "run.created",
        runId: run.id,
        queueId: choice.queue.id,
        actor: actorRef(agent),
        data: {
          externalId: run.externalId,
          conversationId: run.conversationId,
          metadata: run.metadata,
        },
        at: now,
      }),
      ...(opened?.writes ?? []),
      ...idempotencyRecord(agent, idempotency, run.id, now),
    ];
    const results = await commit(statements);
    if (!opened) return { run: runView(run, agent.name), replayed: false };
    rememberPausedBatch(
      { statements, results },
      { rows: opened.rows, settings: context.settings, agent },
      run.conversationId,
    );
    // Policy or remembered approvals may have settled the batch at once, and moved the run on.
    const status = opened.view.status === "pending" ? run.status : "ready";
    return {
      run: { ...runView({ ...run, status }, agent.name), batches: [opened.view] },
      replayed: false,
    };
  });
}
