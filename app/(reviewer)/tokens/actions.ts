"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { Id } from "@/lib/ids";
import { createReviewerToken } from "@/lib/reviewer-tokens/create-reviewer-token";
import { revokeReviewerToken } from "@/lib/reviewer-tokens/revoke-reviewer-token";
import { signOutEverywhere } from "@/lib/sessions/sign-out-everywhere";

// Public endpoints like the API routes: each authenticates from the session; the verbs decide
// whose tokens the caller may manage (their own; an admin's: anyone's).

/** A new personal token for the signed-in reviewer: the answer carries its secret, shown once. */
export const createReviewerTokenAction = reviewerAction([], (reviewer) =>
  createReviewerToken(reviewer, {}),
);

export const revokeReviewerTokenAction = reviewerAction([Id], async (reviewer, [tokenId]) => ({
  token: await revokeReviewerToken(reviewer, tokenId),
}));

/** Ends every session of the signed-in reviewer, this one included (and their tokens if asked). */
export const signOutEverywhereAction = reviewerAction([z.unknown()], (reviewer, [input]) =>
  signOutEverywhere(reviewer, input),
);
