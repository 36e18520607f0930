import { asc, eq } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { calls } from "@/db/schema";
import { findBatchForReviewer } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { transact } from "@/lib/events/transact";
import { applyDecision } from "./apply-decision";

export const DecideBatchInput = z.object({
  outcome: z.enum(["approve", "reject"]),
  /** the revision the reviewer saw of every call of the batch */
  expectedRevisions: z.record(z.string(), z.int().min(1)),
  reason: z.string().max(4000).optional(),
});
export type DecideBatchInput = z.infer<typeof DecideBatchInput>;

/** Approves or rejects every call of a batch at once: all of them, or (on any conflict) none. */
export async function decideBatch(
  actor: Actor,
  batchId: string,
  body: unknown,
): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(DecideBatchInput, body);
  try {
    return await transact(async (tx) => {
      const target = await findBatchForReviewer(tx, reviewer, batchId);
      const batchCalls = await tx
        .select()
        .from(calls)
        .where(eq(calls.batchId, batchId))
        .orderBy(asc(calls.position));
      assertNamesEveryCall(
        batchCalls.map((c) => c.id),
        Object.keys(input.expectedRevisions),
      );
      let settled: BatchView | null = null;
      for (const call of batchCalls) {
        try {
          settled = await applyDecision(tx, reviewer, call, target, {
            outcome: input.outcome,
            expectedRevision: input.expectedRevisions[call.id]!,
            reason: input.reason,
          });
        } catch (error) {
          throw error instanceof ConflictError ? new BatchConflict(error, call.id) : error;
        }
      }
      return settled ?? (await loadBatchView(tx, batchId))!;
    });
  } catch (error) {
    if (!(error instanceof BatchConflict)) throw error;
    // The transaction rolled back the calls decided before the conflict: `current` is read after.
    const { cause, callId } = error;
    throw new ConflictError(
      cause.code as ConstructorParameters<typeof ConflictError>[0],
      `Nothing was decided: ${cause.message}`,
      await loadBatchView(getDb(), batchId),
      { callId },
    );
  }
}

class BatchConflict extends Error {
  constructor(
    readonly cause: ConflictError,
    readonly callId: string,
  ) {
    super(cause.message);
  }
}

function assertNamesEveryCall(callIds: string[], listed: string[]) {
  const missing = callIds.filter((id) => !listed.includes(id));
  const unknown = listed.filter((id) => !callIds.includes(id));
  if (missing.length === 0 && unknown.length === 0) return;
  throw new InvalidRequestError(
    "expectedRevisions must name every call of the batch, and only those.",
    [
      ...missing.map((id) => ({ path: `expectedRevisions.${id}`, message: "missing" })),
      ...unknown.map((id) => ({
        path: `expectedRevisions.${id}`,
        message: "not a call of this batch",
      })),
    ],
  );
}
