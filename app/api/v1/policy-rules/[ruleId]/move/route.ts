import { apiRoute, json } from "@/lib/http/api-route";
import { listPolicyRules } from "@/lib/policies/list-policy-rules";
import { movePolicyRule } from "@/lib/policies/move-policy-rule";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ ruleId: string }>(async ({ actor, params, body }) => {
  await movePolicyRule(actor, params.ruleId, body);
  return json({ rules: await listPolicyRules(actor) });
});

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
