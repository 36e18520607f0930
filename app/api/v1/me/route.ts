import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { getMySettings, updateMySettings } from "@/lib/people/my-settings";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await getMySettings(actor)));

export const PATCH = apiRoute(async ({ actor, body }) => json(await updateMySettings(actor, body)));

export const { POST, PUT, DELETE, OPTIONS } = refuseOtherMethods("GET", "PATCH");
