import { createBatch } from "@/lib/batches/create-batch";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute<{ runId: string }>(async ({ request, params, body, actor }) => {
  const { batch, replayed } = await createBatch(actor, params.runId, body, {
    idempotencyKey: request.headers.get("idempotency-key"),
  });
  return json(batch, replayed ? 200 : 201);
});

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
