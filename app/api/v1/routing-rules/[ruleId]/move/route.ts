import { apiRoute, json } from "@/lib/http/api-route";
import { moveRule } from "@/lib/routing/move-rule";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ ruleId: string }>(async ({ actor, params, body }) =>
  json({ rules: await moveRule(actor, params.ruleId, body) }),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
