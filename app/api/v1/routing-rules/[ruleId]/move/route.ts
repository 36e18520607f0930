import { apiRoute, json } from "@/lib/http/api-route";
import { moveRule } from "@/lib/routing/move-rule";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ ruleId: string }>(async ({ actor, params, body }) =>
  json({ rules: await moveRule(actor, params.ruleId, body) }),
);
