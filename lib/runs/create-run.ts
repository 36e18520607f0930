import { z } from "zod";
import { runs } from "@/db/schema";
import { idempotencyFor, previousResult, rememberResult } from "@/lib/api/idempotency";
import { parseInput } from "@/lib/api/parse";
import { loadRunView, runView, type RunView } from "@/lib/api/views";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { CreateBatchInput } from "@/lib/batches/batch-input";
import { openBatch, resolveQueue } from "@/lib/batches/open-batch";
import { ConflictError } from "@/lib/errors";
import { appendEvent } from "@/lib/events/append-event";
import { transact } from "@/lib/events/transact";
import { newId } from "@/lib/ids";

export const CreateRunInput = z.object({
  externalId: z.string().min(1).max(200).optional(),
  conversationId: z.string().min(1).max(200).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  /** the run's first pause, created in the same transaction */
  batch: CreateBatchInput.optional(),
  /** refuse the run's action batches (409 plan_required) until a plan batch of it is approved */
  requirePlanApproval: z.boolean().default(false),
});
export type CreateRunInput = z.infer<typeof CreateRunInput>;

/** Starts a run for the calling agent, optionally paused at once with its first batch. */
export async function createRun(
  actor: Actor,
  body: unknown,
  options: { idempotencyKey?: string | null } = {},
): Promise<{ run: RunView; replayed: boolean }> {
  const agent = requireAgent(actor);
  // Every field is optional, so no body at all means the same as `{}` (retries included).
  const request = body ?? {};
  const input = parseInput(CreateRunInput, request);
  const idempotency = idempotencyFor(options.idempotencyKey, "POST /runs", request);
  const withBatches = input.batch !== undefined;

  return transact(async (tx) => {
    const earlier = await previousResult(tx, agent, idempotency, (id) =>
      loadRunView(tx, id, { withBatches }),
    );
    if (earlier) return { run: (await loadRunView(tx, earlier, { withBatches }))!, replayed: true };

    if (input.requirePlanApproval && input.batch && input.batch.kind !== "plan") {
      throw new ConflictError(
        "plan_required",
        "This run requires an approved plan first: pause it with a batch of kind plan.",
        null,
      );
    }
    const choice = await resolveQueue(tx, agent, input.batch);
    const { queue } = choice;
    const now = Date.now();
    const run = {
      id: newId(),
      agentKeyId: agent.id,
      queueId: queue.id,
      externalId: input.externalId ?? null,
      conversationId: input.conversationId ?? null,
      status: input.batch ? ("waiting_approval" as const) : ("running" as const),
      metadata: input.metadata ?? null,
      checkpoint: input.batch?.checkpoint ?? null,
      requirePlanApproval: input.requirePlanApproval,
      createdAt: now,
      updatedAt: now,
    };
    const [inserted] = await tx.insert(runs).values(run).returning();
    await appendEvent(tx, {
      type: "run.created",
      runId: run.id,
      queueId: queue.id,
      actor: actorRef(agent),
      data: {
        externalId: run.externalId,
        conversationId: run.conversationId,
        metadata: run.metadata,
      },
      at: now,
    });
    const batch = input.batch ? await openBatch(tx, agent, run, choice, input.batch, now) : null;
    await rememberResult(tx, agent, idempotency, run.id);
    if (batch && batch.status !== "pending") {
      // Remembered approvals settled the batch at once, and moved the run on with it.
      return { run: (await loadRunView(tx, run.id, { withBatches }))!, replayed: false };
    }
    const view = runView(inserted!, agent.name);
    return { run: batch ? { ...view, batches: [batch] } : view, replayed: false };
  });
}
