import { apiRoute, json } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";
import { listPolicySuggestions } from "@/lib/policies/suggest-policies";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor, request }) =>
  json(await listPolicySuggestions(actor, queryOf(request))),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
