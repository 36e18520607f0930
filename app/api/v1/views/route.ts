import { apiRoute, json } from "@/lib/http/api-route";
import { listViews } from "@/lib/views/list-views";
import { saveView } from "@/lib/views/save-view";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await listViews(actor)));

export const POST = apiRoute(async ({ body, actor }) => json(await saveView(actor, body), 201));

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
