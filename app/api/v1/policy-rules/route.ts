import { z } from "zod";
import { parseInput } from "@/lib/input/parse";
import { apiRoute, json } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { listPolicyRules } from "@/lib/policies/list-policy-rules";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

const ListQuery = z.strictObject({ queue: z.string().min(1).max(200).optional() });

export const GET = apiRoute(async ({ request, actor }) => {
  const { queue } = parseInput(ListQuery, queryOf(request));
  return json({ rules: await listPolicyRules(actor, { queueId: queue }) });
});

export const POST = apiRoute(async ({ actor, body }) =>
  json(await createPolicyRule(actor, body), 201),
);

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
