import { apiRoute, json } from "@/lib/http/api-route";
import { tryPolicy } from "@/lib/policies/try-policy";

export const dynamic = "force-dynamic";

export const POST = apiRoute(async ({ actor, body }) => json(await tryPolicy(actor, body)));
