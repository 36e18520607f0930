import { apiRoute, json } from "@/lib/http/api-route";
import { deletePolicyRule } from "@/lib/policies/delete-policy-rule";
import { updatePolicyRule } from "@/lib/policies/update-policy-rule";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const PATCH = apiRoute<{ ruleId: string }>(async ({ actor, params, body }) =>
  json(await updatePolicyRule(actor, params.ruleId, body)),
);

export const DELETE = apiRoute<{ ruleId: string }>(async ({ actor, params }) => {
  await deletePolicyRule(actor, params.ruleId);
  return new Response(null, { status: 204 });
});

export const { GET, HEAD, POST, PUT, OPTIONS } = refuseOtherMethods("PATCH", "DELETE");
