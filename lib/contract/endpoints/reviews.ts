import { ClaimReviewInput, claimReview } from "@/lib/claims/claim-review";
import { releaseReview } from "@/lib/claims/release-review";
import { json } from "@/lib/http/api-route";
import { SetAsideInput, setAside } from "@/lib/set-aside/set-aside";
import { bringBack } from "@/lib/set-aside/bring-back";
import { ListQueueQuery, listQueue } from "@/lib/batches/list-queue";
import { QueueSnapshotQuery, queueSnapshot } from "@/lib/batches/queue-snapshot";
import { DecideCallInput, decideCall } from "@/lib/approvals/decide-call";
import { DecideBatchInput, decideBatch } from "@/lib/approvals/decide-batch";
import { defineEndpoint } from "../endpoint";

export const reviewEndpoints = [
  defineEndpoint({
    method: "POST",
    path: "/batches/{batchId}/review-claim",
    auth: "reviewer",
    operationId: "claimReview",
    tag: "Reviews",
    summary: "Claim a pending batch for review ('I'm reviewing this'), or renew your claim",
    description:
      "The claim shows on the card to everyone for `minutes` (1-15, default 5) and is renewed by claiming again. Another reviewer's live claim is 409 already_claimed (with `holder` and `expiresAt`). In a queue whose claimMode is lock, only the claimant may decide the batch meanwhile (others get 409 claimed_by_other); a decision by the claimant ends the claim. Writes a review.claimed event carrying the batch.",
    body: ClaimReviewInput,
    ok: { status: 200, schema: "Batch" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ params, body, actor }) =>
      json(await claimReview(actor, params.batchId, body)),
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/batches/{batchId}/review-claim",
    auth: "reviewer",
    operationId: "releaseReview",
    tag: "Reviews",
    summary: "Release your review claim (idempotent)",
    description:
      "Answers the batch without your claim. Another reviewer's live claim is 409 already_claimed. Writes a review.released event carrying the batch.",
    ok: { status: 200, schema: "Batch" },
    errors: [401, 403, 404, 409],
    handler: async ({ params, actor }) => json(await releaseReview(actor, params.batchId)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/batches/{batchId}/set-aside",
    auth: "reviewer",
    operationId: "setAside",
    tag: "Reviews",
    summary: "'Not now': set a pending batch aside, out of your own queue view, for a while",
    description:
      "For 15 minutes, 1 hour, or until 09:00 of the next day in `timeZone`. Decides nothing; the batch leaves only the caller's queue view (its `setAside` lists who set it aside and `returnsAt`, for everyone to see) and comes back at the chosen time, or sooner when the last fifth of its time begins. Setting it aside again replaces the caller's earlier choice. Only members who may decide it (under separation of duties, not the agent key's owner: 403). A settled batch is 409 not_pending; one already in the last fifth of its time is 409 deadline_near. Writes a batch.set_aside event carrying the batch (on the queue's stream and the run's timeline).",
    body: SetAsideInput,
    ok: { status: 200, schema: "Batch" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ params, body, actor }) => json(await setAside(actor, params.batchId, body)),
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/batches/{batchId}/set-aside",
    auth: "reviewer",
    operationId: "bringBack",
    tag: "Reviews",
    summary: "Bring a batch you set aside back into your queue now (idempotent)",
    description:
      "Removes the caller's own set-aside only; others' stay. With none (never set aside, or already back) it answers the batch as it is and writes nothing. Writes a batch.brought_back event carrying the batch when the batch was still away.",
    ok: { status: 200, schema: "Batch" },
    errors: [401, 403, 404],
    handler: async ({ params, actor }) => json(await bringBack(actor, params.batchId)),
  }),
  defineEndpoint({
    method: "GET",
    path: "/queue",
    auth: "reviewer",
    operationId: "listQueue",
    tag: "Reviews",
    summary: "Batches of the reviewer's queues, newest first",
    query: ListQueueQuery,
    ok: { status: 200, schema: "QueuePage" },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => json(await listQueue(actor, query)),
  }),
  defineEndpoint({
    method: "GET",
    path: "/queue/snapshot",
    auth: "reviewer",
    operationId: "getQueueSnapshot",
    tag: "Reviews",
    summary:
      "The pending batches of the reviewer's queues (or of the one named by `queue`: 404 if the reviewer is not in it), soonest deadline first, a page at a time, with the stream position (lastEventId) to follow from",
    query: QueueSnapshotQuery,
    ok: { status: 200, schema: "QueueSnapshot" },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => json(await queueSnapshot(actor, query)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/calls/{callId}/decision",
    auth: "reviewer",
    operationId: "decideCall",
    tag: "Reviews",
    summary: "Approve, reject or edit one call at the revision reviewed",
    body: DecideCallInput,
    ok: { status: 200, schema: "CallDecision" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) => json(await decideCall(actor, params.callId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/batches/{batchId}/decision",
    auth: "reviewer",
    operationId: "decideBatch",
    tag: "Reviews",
    summary: "Approve or reject every call of a batch, all or nothing",
    body: DecideBatchInput,
    ok: { status: 200, schema: "Batch" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) =>
      json(await decideBatch(actor, params.batchId, body)),
  }),
];
