import { RoutingRuleInput, RoutingRuleUpdate, RoutingRuleMove } from "@/lib/routing/rule-input";
import { json } from "@/lib/http/api-route";
import { createRule } from "@/lib/routing/create-rule";
import { listRules } from "@/lib/routing/list-rules";
import { deleteRule } from "@/lib/routing/delete-rule";
import { updateRule } from "@/lib/routing/update-rule";
import { moveRule } from "@/lib/routing/move-rule";
import { defineEndpoint } from "../endpoint";

export const routingEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/routing-rules",
    auth: "reviewer",
    operationId: "listRoutingRules",
    tag: "Routing",
    summary: "The routing rules in the order they are tried (admins)",
    description:
      "A batch whose request names no queue goes to the queue of the first enabled rule (lowest position) whose conditions all hold: the agent, a tool-name glob matched by any call, a minimum total cost estimate. No rule: the agent key's default queue. The rule is recorded on the batch (batch.routing).",
    ok: { status: 200, schema: "RoutingRuleList" },
    errors: [401, 403],
    handler: async ({ actor }) => json({ rules: await listRules(actor) }),
  }),
  defineEndpoint({
    method: "POST",
    path: "/routing-rules",
    auth: "reviewer",
    operationId: "createRoutingRule",
    tag: "Routing",
    summary: "Add a routing rule (admins)",
    body: RoutingRuleInput,
    ok: { status: 201, schema: "RoutingRule" },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ actor, body }) => json(await createRule(actor, body), 201),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/routing-rules/{ruleId}",
    auth: "reviewer",
    operationId: "updateRoutingRule",
    tag: "Routing",
    summary: "Change a routing rule (admins); only the fields sent change",
    body: RoutingRuleUpdate,
    ok: { status: 200, schema: "RoutingRule" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ actor, params, body }) => json(await updateRule(actor, params.ruleId, body)),
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/routing-rules/{ruleId}",
    auth: "reviewer",
    operationId: "deleteRoutingRule",
    tag: "Routing",
    summary: "Remove a routing rule (admins); batches it routed keep naming it",
    ok: { status: 204, schema: "Empty", description: "Removed; no body" },
    content: {},
    errors: [401, 403, 404],
    handler: async ({ actor, params }) => {
      await deleteRule(actor, params.ruleId);
      return new Response(null, { status: 204 });
    },
  }),
  defineEndpoint({
    method: "POST",
    path: "/routing-rules/{ruleId}/move",
    auth: "reviewer",
    operationId: "moveRoutingRule",
    tag: "Routing",
    summary: "Move a routing rule to another place in the order (admins); answers the new order",
    body: RoutingRuleMove,
    ok: { status: 200, schema: "RoutingRuleList" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ actor, params, body }) =>
      json({ rules: await moveRule(actor, params.ruleId, body) }),
  }),
];
