import { z } from "zod";
import {
  PolicyRuleInput,
  PolicyRuleUpdate,
  PolicyRuleMove,
  PolicyTryInput,
  PolicyBacktestInput,
  PolicySuggestionsQuery,
  DismissSuggestionInput,
} from "@/lib/policies/policy-input";
import { parseInput } from "@/lib/input/parse";
import { json } from "@/lib/http/api-route";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { listPolicyRules } from "@/lib/policies/list-policy-rules";
import { deletePolicyRule } from "@/lib/policies/delete-policy-rule";
import { updatePolicyRule } from "@/lib/policies/update-policy-rule";
import { movePolicyRule } from "@/lib/policies/move-policy-rule";
import { tryPolicy } from "@/lib/policies/try-policy";
import { backtestPolicy } from "@/lib/policies/backtest-policy";
import { listPolicySuggestions } from "@/lib/policies/suggest-policies";
import { dismissSuggestion } from "@/lib/policies/dismiss-suggestion";
import { defineEndpoint } from "../endpoint";

// The query this endpoint parses is the one the document shows (it showed a looser copy before).
const ListPolicyRulesQuery = z.strictObject({ queue: z.string().min(1).max(200).optional() });

export const policyEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/policy-rules",
    auth: "reviewer",
    operationId: "listPolicyRules",
    tag: "Policies",
    summary:
      "Policy rules: the global ones and those of the caller's queues (?queue=ID: that queue's and the global ones)",
    description:
      "When a batch is created each call meets the enabled rules of its queue and the global ones. Precedence: deny over ask over allow; within an effect the most specific rule (most conditions) decides, then a queue's rule before a global one, then list order. No match: ask. A blocked call is rejected at once (decision.source policy, decision.policy.blocked true, event call.blocked) and never reaches a reviewer; an allowed one is approved (source policy).",
    query: ListPolicyRulesQuery,
    ok: { status: 200, schema: "PolicyRuleList" },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => {
      const { queue } = parseInput(ListPolicyRulesQuery, query);
      return json({ rules: await listPolicyRules(actor, { queueId: queue }) });
    },
  }),
  defineEndpoint({
    method: "POST",
    path: "/policy-rules",
    auth: "reviewer",
    operationId: "createPolicyRule",
    tag: "Policies",
    summary: "Add a policy rule: a queue's (its leads) or a global one (admins)",
    body: PolicyRuleInput,
    ok: { status: 201, schema: "PolicyRule" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ actor, body }) => json(await createPolicyRule(actor, body), 201),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/policy-rules/{ruleId}",
    auth: "reviewer",
    operationId: "updatePolicyRule",
    tag: "Policies",
    summary: "Change a policy rule; only the fields sent change (null clears a condition)",
    body: PolicyRuleUpdate,
    ok: { status: 200, schema: "PolicyRule" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ actor, params, body }) =>
      json(await updatePolicyRule(actor, params.ruleId, body)),
  }),
  defineEndpoint({
    method: "DELETE",
    path: "/policy-rules/{ruleId}",
    auth: "reviewer",
    operationId: "deletePolicyRule",
    tag: "Policies",
    summary: "Remove a policy rule; calls it settled keep a copy of it",
    ok: { status: 204, schema: "Empty", description: "Removed; no body" },
    content: {},
    errors: [401, 403, 404],
    handler: async ({ actor, params }) => {
      await deletePolicyRule(actor, params.ruleId);
      return new Response(null, { status: 204 });
    },
  }),
  defineEndpoint({
    method: "POST",
    path: "/policy-rules/{ruleId}/move",
    auth: "reviewer",
    operationId: "movePolicyRule",
    tag: "Policies",
    summary: "Move a policy rule within its list (its queue's or the global one)",
    body: PolicyRuleMove,
    ok: { status: 200, schema: "PolicyRuleList" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ actor, params, body }) => {
      await movePolicyRule(actor, params.ruleId, body);
      return json({ rules: await listPolicyRules(actor) });
    },
  }),
  defineEndpoint({
    method: "POST",
    path: "/policy-rules/try",
    auth: "reviewer",
    operationId: "tryPolicy",
    tag: "Policies",
    summary:
      "Try a call: what the rules of a queue would do with it, which rule decides and why; writes nothing",
    body: PolicyTryInput,
    ok: { status: 200, schema: "PolicyTrial" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ actor, body }) => json(await tryPolicy(actor, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/policy-rules/backtest",
    auth: "reviewer",
    operationId: "backtestPolicy",
    tag: "Policies",
    summary:
      "Backtest a rule: what it would have done to a queue's history (default the last 30 days); writes nothing",
    description:
      "The rule exactly as POST /policy-rules takes it, the queue whose history to read (default the rule's own; required for a global rule) and a period of at most 366 days. Each call of the cards settled in the period meets the queue's enabled rules with this one among them, through the matcher batch creation uses: a call is matched when the rule's effect wins for it (shadowed: its conditions hold but a stronger rule takes it). Only reviewers' decisions are evidence: approved (as asked), edited, rejected, and expired (left to the deadline); calls a policy or a remembered approval settled are counted apart (notEvidence). Overturned: an allow rule matching a rejected call, a deny rule matching an approved one, with who decided (every vote of a quorum) and their reason. cards.settled counts the cards all of whose waiting calls the rule matches; cards.savedMs sums their time to decision (expired cards save none). Same authorization as creating the rule: a queue's leads, admins.",
    body: PolicyBacktestInput,
    ok: { status: 200, schema: "PolicyBacktest" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ actor, body }) => json(await backtestPolicy(actor, body)),
  }),
  defineEndpoint({
    method: "GET",
    path: "/policy-suggestions",
    auth: "reviewer",
    operationId: "listPolicySuggestions",
    tag: "Policies",
    summary:
      "Allow rules a queue's reviewers have been applying by hand, each with its backtest (the queue's leads, admins)",
    description:
      "An agent and tool, and where the arguments show it a bound on one argument (a number at most N, a path under a directory), approved as asked at least minApprovals times (default 20) in the period (default the last 30 days) with no rejection, edit or expiry among the calls the rule would match; a rule that would overturn any decision is never offered. `rule` is the body of POST /policy-rules that creates it. Dismissed suggestions are left out until their fingerprint (the evidence) changes.",
    query: PolicySuggestionsQuery,
    ok: { status: 200, schema: "PolicySuggestionList" },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => json(await listPolicySuggestions(actor, query)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/policy-suggestions/dismiss",
    auth: "reviewer",
    operationId: "dismissPolicySuggestion",
    tag: "Policies",
    summary: "Dismiss a suggestion: hidden until its evidence changes (the queue's leads, admins)",
    body: DismissSuggestionInput,
    ok: { status: 200, schema: "PolicySuggestionDismissal" },
    errors: [400, 401, 403, 404, 413, 415],
    handler: async ({ actor, body }) => json(await dismissSuggestion(actor, body)),
  }),
];
