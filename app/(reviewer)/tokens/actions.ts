"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import { parseInput } from "@/lib/api/parse";
import { createReviewerToken } from "@/lib/reviewer-tokens/create-reviewer-token";
import type { ReviewerTokenView } from "@/lib/reviewer-tokens/reviewer-tokens";
import { revokeReviewerToken } from "@/lib/reviewer-tokens/revoke-reviewer-token";
import { signOutEverywhere } from "@/lib/sessions/sign-out-everywhere";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like the API routes: each authenticates from the session; the verbs decide
// whose tokens the caller may manage (their own; an admin's: anyone's).

const Id = z.string().min(1).max(200);

/** A new personal token for the signed-in reviewer: the answer carries its secret, shown once. */
export async function createReviewerTokenAction(): Promise<
  ActionResult<{ token: string; reviewerToken: ReviewerTokenView }>
> {
  try {
    return { ok: true, ...(await createReviewerToken(await actionReviewer(), {})) };
  } catch (error) {
    return actionError(error);
  }
}

export async function revokeReviewerTokenAction(
  tokenId: string,
): Promise<ActionResult<{ token: ReviewerTokenView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, tokenId);
    return { ok: true, token: await revokeReviewerToken(reviewer, tokenId) };
  } catch (error) {
    return actionError(error);
  }
}

/** Ends every session of the signed-in reviewer, this one included (and their tokens if asked). */
export async function signOutEverywhereAction(
  input: unknown,
): Promise<ActionResult<{ sessionsEnded: number; tokensRevoked: number }>> {
  try {
    return { ok: true, ...(await signOutEverywhere(await actionReviewer(), input)) };
  } catch (error) {
    return actionError(error);
  }
}
