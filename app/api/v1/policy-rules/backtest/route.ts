import { apiRoute, json } from "@/lib/http/api-route";
import { backtestPolicy } from "@/lib/policies/backtest-policy";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute(async ({ actor, body }) => json(await backtestPolicy(actor, body)));

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
