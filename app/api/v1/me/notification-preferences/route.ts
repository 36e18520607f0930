import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { listNotificationPreferences } from "@/lib/notifications/preferences";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await listNotificationPreferences(actor)));

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
