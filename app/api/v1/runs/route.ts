import { apiRoute, json } from "@/lib/http/api-route";
import { createRun } from "@/lib/runs/create-run";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const POST = apiRoute(async ({ request, body, actor }) => {
  const { run, replayed } = await createRun(actor, body, {
    idempotencyKey: request.headers.get("idempotency-key"),
  });
  return json(run, replayed ? 200 : 201);
});

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
