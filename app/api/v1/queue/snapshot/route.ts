import { queueSnapshot } from "@/lib/batches/queue-snapshot";
import { apiRoute, json } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ request, actor }) =>
  json(await queueSnapshot(actor, queryOf(request))),
);
