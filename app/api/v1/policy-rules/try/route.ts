import { apiRoute, json } from "@/lib/http/api-route";
import { tryPolicy } from "@/lib/policies/try-policy";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute(async ({ actor, body }) => json(await tryPolicy(actor, body)));

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
