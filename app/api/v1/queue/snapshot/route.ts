import { queueSnapshot } from "@/lib/batches/queue-snapshot";
import { apiRoute, json } from "@/lib/http/api-route";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await queueSnapshot(actor)));
