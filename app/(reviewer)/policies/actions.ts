"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { setAgentMode } from "@/lib/agents/agent-keys";
import { assertJsonDepth } from "@/lib/http/json-depth";
import { Id } from "@/lib/ids";
import { assertWellFormedText } from "@/lib/text/stored-text";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { deletePolicyRule } from "@/lib/policies/delete-policy-rule";
import { movePolicyRule } from "@/lib/policies/move-policy-rule";
import { tryPolicy } from "@/lib/policies/try-policy";
import { updatePolicyRule } from "@/lib/policies/update-policy-rule";
import { backtestPolicy } from "@/lib/policies/backtest-policy";
import { dismissSuggestion } from "@/lib/policies/dismiss-suggestion";

// Public endpoints like the API routes: each authenticates from the session; the verbs check who
// may change which rule (a queue's leads, admins for the global ones) and validate the input.

export type TryPolicyResult = Awaited<ReturnType<typeof tryPolicy>>;

export const createPolicyRuleAction = reviewerAction([z.unknown()], async (reviewer, [input]) => ({
  rule: await createPolicyRule(reviewer, input),
}));

/** Changes the fields sent; `null` clears an optional condition. */
export const updatePolicyRuleAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [ruleId, input]) => ({ rule: await updatePolicyRule(reviewer, ruleId, input) }),
);

/** Moves a rule to place `to` (from 0) within its list: its queue's, or the global one. */
export const movePolicyRuleAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [ruleId, to]) => {
    await movePolicyRule(reviewer, ruleId, { to });
    return {};
  },
);

export const deletePolicyRuleAction = reviewerAction([Id], async (reviewer, [ruleId]) => {
  await deletePolicyRule(reviewer, ruleId);
  return {};
});

/** What would happen to a tool call in a queue now; writes nothing. */
export const tryPolicyAction = reviewerAction([z.unknown()], async (reviewer, [input]) => {
  // A trial call's args are walked like an agent's (canonical JSON): capped as the API caps them.
  assertJsonDepth(input, "(body)");
  assertWellFormedText(input);
  return { result: await tryPolicy(reviewer, input) };
});

/**
 * What a rule (as the rule forms send it, with the queue whose history to read) would have done
 * over the last 30 days, or the period given. Writes nothing; authorized as creating the rule.
 */
export const backtestPolicyAction = reviewerAction([z.unknown()], async (reviewer, [input]) => {
  assertJsonDepth(input, "(body)");
  assertWellFormedText(input);
  return { report: await backtestPolicy(reviewer, input) };
});

/** Hides a suggestion until its evidence changes (the queue's leads, admins). */
export const dismissSuggestionAction = reviewerAction([z.unknown()], async (reviewer, [input]) => {
  await dismissSuggestion(reviewer, input);
  return {};
});

/** Admins only (the verb checks): the mode holds in every queue the agent reaches. */
export const setAgentModeAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [agentId, mode]) => ({
    agent: await setAgentMode(reviewer, agentId, { mode }),
  }),
);
