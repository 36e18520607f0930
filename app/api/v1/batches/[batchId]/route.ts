import { readBatch } from "@/lib/batches/read-batch";
import { apiRoute, json } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute<{ batchId: string }>(async ({ request, params, actor, credential }) =>
  json(await readBatch(actor, params.batchId, queryOf(request), request.signal, credential)),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
