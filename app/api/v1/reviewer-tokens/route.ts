import { createReviewerToken } from "@/lib/reviewer-tokens/create-reviewer-token";
import { listReviewerTokens } from "@/lib/reviewer-tokens/reviewer-tokens";
import { requireSignedIn } from "@/lib/auth/require-session";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor, request }) => {
  const userId = new URL(request.url).searchParams.get("user") ?? undefined;
  return json({ tokens: await listReviewerTokens(actor, { userId }) });
});

export const POST = apiRoute(async ({ actor, body, credential }) => {
  // A token must not mint its own successor: revoking a leaked token would then not end the access.
  requireSignedIn(credential, "Personal tokens are created");
  return json(await createReviewerToken(actor, body), 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
