import { revokeReviewerToken } from "@/lib/reviewer-tokens/revoke-reviewer-token";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ tokenId: string }>(async ({ actor, params }) =>
  json({ token: await revokeReviewerToken(actor, params.tokenId) }),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
