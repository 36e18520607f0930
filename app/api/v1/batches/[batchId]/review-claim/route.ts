import { claimReview } from "@/lib/claims/claim-review";
import { releaseReview } from "@/lib/claims/release-review";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await claimReview(actor, params.batchId, body)),
);

export const DELETE = apiRoute<{ batchId: string }>(async ({ params, actor }) =>
  json(await releaseReview(actor, params.batchId)),
);

export const { GET, HEAD, PUT, PATCH, OPTIONS } = refuseOtherMethods("POST", "DELETE");
