import { apiRoute, json } from "@/lib/http/api-route";
import { deleteRule } from "@/lib/routing/delete-rule";
import { updateRule } from "@/lib/routing/update-rule";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const PATCH = apiRoute<{ ruleId: string }>(async ({ actor, params, body }) =>
  json(await updateRule(actor, params.ruleId, body)),
);

export const DELETE = apiRoute<{ ruleId: string }>(async ({ actor, params }) => {
  await deleteRule(actor, params.ruleId);
  return new Response(null, { status: 204 });
});

export const { GET, HEAD, POST, PUT, OPTIONS } = refuseOtherMethods("PATCH", "DELETE");
