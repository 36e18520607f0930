import { CreateBatchInput } from "@/lib/batches/batch-input";
import { createBatch } from "@/lib/batches/create-batch";
import { json } from "@/lib/http/api-route";
import { ReadBatchQuery, readBatch } from "@/lib/batches/read-batch";
import { CancelBatchInput, cancelBatch } from "@/lib/batches/cancel-batch";
import { defineEndpoint } from "../endpoint";

export const batchEndpoints = [
  defineEndpoint({
    method: "POST",
    path: "/runs/{runId}/batches",
    auth: "agent",
    operationId: "createBatch",
    tag: "Batches",
    summary: "Pause the run with a batch of tool calls",
    description:
      "Each call first meets the policy rules of its queue and the agent's mode (see /policy-rules): allowed calls are approved at once (decision.source policy), blocked ones rejected at once (decision.policy.blocked, never shown to reviewers, must not run), remembered approvals settle theirs (source memory); the rest wait for reviewers. The run becomes waiting_approval, or ready at once when nothing is left to decide. A worker holding the claim passes its claimToken; the claim ends. 409 plan_required: the run was created with requirePlanApproval and no plan batch of it is approved yet. A plan batch's reviewer may edit only its summary (returned as decision.editedArgs.summary).",
    body: CreateBatchInput,
    idempotent: true,
    ok: { status: 201, schema: "Batch" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ request, params, body, actor }) => {
      const { batch, replayed } = await createBatch(actor, params.runId, body, {
        idempotencyKey: request.headers.get("idempotency-key"),
      });
      return json(batch, replayed ? 200 : 201);
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/batches/{batchId}",
    auth: "either",
    operationId: "getBatch",
    tag: "Batches",
    summary:
      "A batch; with wait=N (0-60 s) a pending batch is held until it settles or the wait ends",
    query: ReadBatchQuery,
    ok: { status: 200, schema: "Batch" },
    errors: [400, 401, 404],
    handler: async ({ request, params, actor, credential, query }) =>
      json(await readBatch(actor, params.batchId, query, request.signal, credential)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/batches/{batchId}/cancel",
    auth: "agent",
    operationId: "cancelBatch",
    tag: "Batches",
    summary: "Withdraw a pending batch",
    body: CancelBatchInput,
    ok: { status: 200, schema: "Batch" },
    errors: [400, 401, 403, 404, 409],
    handler: async ({ params, body, actor }) =>
      json(await cancelBatch(actor, params.batchId, body)),
  }),
];
