import { apiRoute, json } from "@/lib/http/api-route";
import { dismissSuggestion } from "@/lib/policies/dismiss-suggestion";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute(async ({ actor, body }) => json(await dismissSuggestion(actor, body)));

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
