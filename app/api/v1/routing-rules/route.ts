import { apiRoute, json } from "@/lib/http/api-route";
import { createRule } from "@/lib/routing/create-rule";
import { listRules } from "@/lib/routing/list-rules";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json({ rules: await listRules(actor) }));

export const POST = apiRoute(async ({ actor, body }) => json(await createRule(actor, body), 201));

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
