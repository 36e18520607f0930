import { signOutEverywhere } from "@/lib/sessions/sign-out-everywhere";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute(async ({ actor, body }) => json(await signOutEverywhere(actor, body)));

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
