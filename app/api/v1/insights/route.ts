import { queryInsights } from "@/lib/insights/insights-query";
import { apiRoute, json } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor, request }) =>
  json(await queryInsights(actor, queryOf(request))),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
