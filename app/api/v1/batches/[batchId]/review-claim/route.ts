import { claimReview } from "@/lib/claims/claim-review";
import { releaseReview } from "@/lib/claims/release-review";
import { apiRoute, json } from "@/lib/http/api-route";

export const POST = apiRoute<{ batchId: string }>(async ({ params, body, actor }) =>
  json(await claimReview(actor, params.batchId, body)),
);

export const DELETE = apiRoute<{ batchId: string }>(async ({ params, actor }) =>
  json(await releaseReview(actor, params.batchId)),
);
