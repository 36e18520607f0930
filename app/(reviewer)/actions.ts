"use server";

import { z } from "zod";
import { getDb } from "@/db/client";
import type { ActionFailure, ActionResult } from "@/app/action-result";
import { reviewerAction } from "@/app/server-action";
import { findBatchForReviewer } from "@/lib/access/find-for-caller";
import { loadBatchView, type BatchView } from "@/lib/read-models/batch-run-views";
import { decideBatch } from "@/lib/approvals/decide-batch";
import { decideCall } from "@/lib/approvals/decide-call";
import type { ReviewerActor } from "@/lib/auth/actor";
import { claimReview } from "@/lib/claims/claim-review";
import { releaseReview } from "@/lib/claims/release-review";
import { ConflictError } from "@/lib/errors";
import { assertJsonDepth } from "@/lib/http/json-depth";
import { Id } from "@/lib/ids";
import { requestRollback } from "@/lib/runs/request-rollback";
import { bringBack } from "@/lib/set-aside/bring-back";
import { setAside } from "@/lib/set-aside/set-aside";
import { assertWellFormedText, MultiLineText } from "@/lib/text/stored-text";

// Server actions are public endpoints: each authenticates from the session (reviewerAction), and
// the verbs they call check the reviewer's queue membership and validate the input, as the API
// routes do.

export type BatchResult = ActionResult<{ batch: BatchView }>;

/**
 * On a conflict the card shows the batch as it is now (who decided, the new revision), so the
 * answer carries the whole current batch rather than the conflicting call alone.
 */
async function withCurrentBatch(
  failure: ActionFailure,
  context: { error: unknown; actor: ReviewerActor; args: readonly [string, ...unknown[]] },
): Promise<BatchResult> {
  if (!(context.error instanceof ConflictError)) return failure;
  const [batchId] = context.args;
  try {
    await findBatchForReviewer(getDb(), context.actor, batchId);
    return { ...failure, current: await loadBatchView(getDb(), batchId) };
  } catch {
    return failure;
  }
}

/**
 * editedArgs is the agent's kind of JSON: capped as the API caps a body (json-depth.ts), and
 * well-formed Unicode as a body must be (stored-text.ts).
 */
function checkDecision(decision: unknown): void {
  assertJsonDepth(decision, "decision");
  assertWellFormedText(decision, "decision");
}

export const decideCallAction = reviewerAction(
  [Id, Id, z.unknown()],
  async (reviewer, [, callId, decision]) => {
    checkDecision(decision);
    const { batch } = await decideCall(reviewer, callId, decision);
    return { batch };
  },
  { onError: withCurrentBatch },
);

export const decideBatchAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [batchId, decision]) => {
    checkDecision(decision);
    return { batch: await decideBatch(reviewer, batchId, decision) };
  },
  { onError: withCurrentBatch },
);

/** "I'm reviewing this": claims the batch for a few minutes, or renews the reviewer's claim. */
export const claimReviewAction = reviewerAction(
  // the verb parses minutes (1–15, default 5), as it does the API's body
  [Id, z.unknown().optional()],
  async (reviewer, [batchId, minutes]) => ({
    batch: await claimReview(reviewer, batchId, { minutes }),
  }),
  { onError: withCurrentBatch },
);

export const releaseReviewAction = reviewerAction(
  [Id],
  async (reviewer, [batchId]) => ({ batch: await releaseReview(reviewer, batchId) }),
  { onError: withCurrentBatch },
);

/**
 * "Not now": sets the batch aside for 15 minutes, an hour, or until 09:00 tomorrow in `timeZone`
 * (the browser's), out of this reviewer's queue view only.
 */
export const setAsideAction = reviewerAction(
  [Id, z.unknown(), z.unknown().optional()],
  async (reviewer, [batchId, choice, timeZone]) => ({
    batch: await setAside(reviewer, batchId, { for: choice, timeZone: timeZone ?? undefined }),
  }),
  { onError: withCurrentBatch },
);

/** Brings a batch this reviewer set aside back into their queue now (undo, or early). */
export const bringBackAction = reviewerAction(
  [Id],
  async (reviewer, [batchId]) => ({ batch: await bringBack(reviewer, batchId) }),
  { onError: withCurrentBatch },
);

export const requestRollbackAction = reviewerAction(
  [Id, MultiLineText.max(4000)],
  async (reviewer, [runId, reason]) => {
    const run = await requestRollback(reviewer, runId, { reason: reason || undefined });
    return { rollbackRequestedAt: run.rollbackRequestedAt };
  },
);
