import { apiRoute, json } from "@/lib/http/api-route";
import { listPolicyRules } from "@/lib/policies/list-policy-rules";
import { movePolicyRule } from "@/lib/policies/move-policy-rule";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ ruleId: string }>(async ({ actor, params, body }) => {
  await movePolicyRule(actor, params.ruleId, body);
  return json({ rules: await listPolicyRules(actor) });
});
