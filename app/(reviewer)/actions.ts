"use server";

import { z } from "zod";
import { getDb } from "@/db/client";
import { actionError, type ActionResult } from "@/app/action-result";
import { findBatchForReviewer } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import { decideBatch } from "@/lib/approvals/decide-batch";
import { decideCall } from "@/lib/approvals/decide-call";
import type { ReviewerActor } from "@/lib/auth/actor";
import { claimReview } from "@/lib/claims/claim-review";
import { releaseReview } from "@/lib/claims/release-review";
import { ConflictError } from "@/lib/errors";
import { assertJsonDepth } from "@/lib/http/json-depth";
import { requestRollback } from "@/lib/runs/request-rollback";
import { bringBack } from "@/lib/set-aside/bring-back";
import { setAside } from "@/lib/set-aside/set-aside";
import { actionReviewer } from "./current-reviewer";
import { assertWellFormedText, MultiLineText } from "@/lib/text/stored-text";

// Server actions are public endpoints: each authenticates from the session, and the verbs they
// call check the reviewer's queue membership and validate the input, as the API routes do.

const Id = z.string().min(1).max(200);

export type BatchResult = ActionResult<{ batch: BatchView }>;

/**
 * On a conflict the card shows the batch as it is now (who decided, the new revision), so the
 * answer carries the whole current batch rather than the conflicting call alone.
 */
async function withCurrentBatch(
  error: unknown,
  reviewer: ReviewerActor | null,
  batchId: string,
): Promise<BatchResult> {
  const failure = actionError(error);
  if (!(error instanceof ConflictError) || !reviewer) return failure;
  try {
    await findBatchForReviewer(getDb(), reviewer, batchId);
    return { ...failure, current: await loadBatchView(getDb(), batchId) };
  } catch {
    return failure;
  }
}

export async function decideCallAction(
  batchId: string,
  callId: string,
  decision: unknown,
): Promise<BatchResult> {
  let reviewer: ReviewerActor | null = null;
  try {
    reviewer = await actionReviewer();
    parseInput(z.object({ batchId: Id, callId: Id }), { batchId, callId });
    // editedArgs is the agent's kind of JSON: capped as the API caps a body (json-depth.ts), and
    // well-formed Unicode as a body must be (stored-text.ts).
    assertJsonDepth(decision, "decision");
    assertWellFormedText(decision, "decision");
    const { batch } = await decideCall(reviewer, callId, decision);
    return { ok: true, batch };
  } catch (error) {
    return withCurrentBatch(error, reviewer, batchId);
  }
}

export async function decideBatchAction(batchId: string, decision: unknown): Promise<BatchResult> {
  let reviewer: ReviewerActor | null = null;
  try {
    reviewer = await actionReviewer();
    parseInput(Id, batchId);
    assertJsonDepth(decision, "decision");
    assertWellFormedText(decision, "decision");
    return { ok: true, batch: await decideBatch(reviewer, batchId, decision) };
  } catch (error) {
    return withCurrentBatch(error, reviewer, batchId);
  }
}

/** "I'm reviewing this": claims the batch for a few minutes, or renews the reviewer's claim. */
export async function claimReviewAction(batchId: string, minutes?: number): Promise<BatchResult> {
  let reviewer: ReviewerActor | null = null;
  try {
    reviewer = await actionReviewer();
    parseInput(Id, batchId);
    return { ok: true, batch: await claimReview(reviewer, batchId, { minutes }) };
  } catch (error) {
    return withCurrentBatch(error, reviewer, batchId);
  }
}

export async function releaseReviewAction(batchId: string): Promise<BatchResult> {
  let reviewer: ReviewerActor | null = null;
  try {
    reviewer = await actionReviewer();
    parseInput(Id, batchId);
    return { ok: true, batch: await releaseReview(reviewer, batchId) };
  } catch (error) {
    return withCurrentBatch(error, reviewer, batchId);
  }
}

/**
 * "Not now": sets the batch aside for 15 minutes, an hour, or until 09:00 tomorrow in `timeZone`
 * (the browser's), out of this reviewer's queue view only.
 */
export async function setAsideAction(
  batchId: string,
  choice: unknown,
  timeZone?: unknown,
): Promise<BatchResult> {
  let reviewer: ReviewerActor | null = null;
  try {
    reviewer = await actionReviewer();
    parseInput(Id, batchId);
    return {
      ok: true,
      batch: await setAside(reviewer, batchId, { for: choice, timeZone: timeZone ?? undefined }),
    };
  } catch (error) {
    return withCurrentBatch(error, reviewer, batchId);
  }
}

/** Brings a batch this reviewer set aside back into their queue now (undo, or early). */
export async function bringBackAction(batchId: string): Promise<BatchResult> {
  let reviewer: ReviewerActor | null = null;
  try {
    reviewer = await actionReviewer();
    parseInput(Id, batchId);
    return { ok: true, batch: await bringBack(reviewer, batchId) };
  } catch (error) {
    return withCurrentBatch(error, reviewer, batchId);
  }
}

export async function requestRollbackAction(
  runId: string,
  reason: string,
): Promise<ActionResult<{ rollbackRequestedAt: string | null }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(z.object({ runId: Id, reason: MultiLineText.max(4000) }), { runId, reason });
    const run = await requestRollback(reviewer, runId, { reason: reason || undefined });
    return { ok: true, rollbackRequestedAt: run.rollbackRequestedAt };
  } catch (error) {
    return actionError(error);
  }
}
