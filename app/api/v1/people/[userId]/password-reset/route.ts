import { requireSignedIn } from "@/lib/auth/require-session";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { issuePasswordReset } from "@/lib/people/person-links";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ userId: string }>(async ({ actor, params, credential }) => {
  // a token resetting its own account's password signed in and minted new tokens (issue 24)
  requireSignedIn(credential, "Password reset links are issued");
  return json(await issuePasswordReset(actor, params.userId), 201);
});

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
