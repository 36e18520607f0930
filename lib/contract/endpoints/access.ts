import { z } from "zod";
import {
  CreateReviewerTokenInput,
  createReviewerToken,
} from "@/lib/reviewer-tokens/create-reviewer-token";
import { listReviewerTokens } from "@/lib/reviewer-tokens/reviewer-tokens";
import { json } from "@/lib/http/api-route";
import { Id } from "@/lib/ids";
import { parseInput } from "@/lib/input/parse";
import { revokeReviewerToken } from "@/lib/reviewer-tokens/revoke-reviewer-token";
import { SignOutEverywhereInput, signOutEverywhere } from "@/lib/sessions/sign-out-everywhere";
import { defineEndpoint } from "../endpoint";

const ReviewerTokensQuery = z.object({ user: Id.optional() });

export const accessEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/reviewer-tokens",
    auth: "reviewer",
    operationId: "listReviewerTokens",
    tag: "Access",
    summary:
      "Personal tokens by prefix: the caller's own (admins: everyone's, ?user=ID for one person's)",
    query: ReviewerTokensQuery,
    ok: { status: 200, schema: "ReviewerTokenList" },
    errors: [400, 401, 403],
    handler: async ({ actor, query }) => {
      const { user } = parseInput(ReviewerTokensQuery, query);
      return json({ tokens: await listReviewerTokens(actor, { userId: user }) });
    },
  }),
  defineEndpoint({
    method: "POST",
    path: "/reviewer-tokens",
    auth: "session",
    // A token must not mint its own successor: revoking a leaked token would then not end the access.
    signedIn: "Personal tokens are created",
    operationId: "createReviewerToken",
    tag: "Access",
    summary: "Create a personal token for the caller; the secret is in this answer only",
    description:
      "From a signed-in session only: a key or token is 403 (a token must not mint its own successor). Writes a reviewer_token.created event.",
    body: CreateReviewerTokenInput,
    ok: { status: 201, schema: "CreatedReviewerToken" },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ actor, body }) => json(await createReviewerToken(actor, body), 201),
  }),
  defineEndpoint({
    method: "POST",
    path: "/reviewer-tokens/{tokenId}/revoke",
    auth: "reviewer",
    operationId: "revokeReviewerToken",
    tag: "Access",
    summary: "Revoke a personal token (your own; admins: anyone's)",
    description:
      "Its next request is 401 and its open streams end within seconds. Revoking a revoked token answers it unchanged. Writes a reviewer_token.revoked event.",
    ok: { status: 200, schema: "RevokedReviewerToken" },
    errors: [401, 403, 404],
    handler: async ({ actor, params }) =>
      json({ token: await revokeReviewerToken(actor, params.tokenId) }),
  }),
  defineEndpoint({
    method: "POST",
    path: "/sessions/revoke-all",
    auth: "reviewer",
    operationId: "signOutEverywhere",
    tag: "Access",
    summary:
      "Sign out everywhere: end every session of the caller (and revoke their tokens if asked)",
    description:
      "Every web session of the caller ends, this one included; with revokeTokens every personal token of theirs is revoked too. Their open streams end within seconds. Writes a session.signed_out_everywhere event.",
    body: SignOutEverywhereInput,
    ok: { status: 200, schema: "SignedOutEverywhere" },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ actor, body }) => json(await signOutEverywhere(actor, body)),
  }),
];
