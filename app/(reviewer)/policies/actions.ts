"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import { setAgentMode, type AgentKeyView } from "@/lib/agents/agent-keys";
import { parseInput } from "@/lib/api/parse";
import { assertJsonDepth } from "@/lib/http/json-depth";
import { assertWellFormedText } from "@/lib/text/stored-text";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { deletePolicyRule } from "@/lib/policies/delete-policy-rule";
import type { PolicyRuleView } from "@/lib/policies/list-policy-rules";
import { movePolicyRule } from "@/lib/policies/move-policy-rule";
import { tryPolicy } from "@/lib/policies/try-policy";
import { updatePolicyRule } from "@/lib/policies/update-policy-rule";
import { backtestPolicy, type BacktestReport } from "@/lib/policies/backtest-policy";
import { dismissSuggestion } from "@/lib/policies/dismiss-suggestion";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like the API routes: each authenticates from the session; the verbs check who
// may change which rule (a queue's leads, admins for the global ones) and validate the input.

const Id = z.string().min(1).max(200);

export type TryPolicyResult = Awaited<ReturnType<typeof tryPolicy>>;

export async function createPolicyRuleAction(
  input: unknown,
): Promise<ActionResult<{ rule: PolicyRuleView }>> {
  try {
    return { ok: true, rule: await createPolicyRule(await actionReviewer(), input) };
  } catch (error) {
    return actionError(error);
  }
}

/** Changes the fields sent; `null` clears an optional condition. */
export async function updatePolicyRuleAction(
  ruleId: string,
  input: unknown,
): Promise<ActionResult<{ rule: PolicyRuleView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, ruleId);
    return { ok: true, rule: await updatePolicyRule(reviewer, ruleId, input) };
  } catch (error) {
    return actionError(error);
  }
}

/** Moves a rule to place `to` (from 0) within its list: its queue's, or the global one. */
export async function movePolicyRuleAction(ruleId: string, to: number): Promise<ActionResult> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, ruleId);
    await movePolicyRule(reviewer, ruleId, { to });
    return { ok: true };
  } catch (error) {
    return actionError(error);
  }
}

export async function deletePolicyRuleAction(ruleId: string): Promise<ActionResult> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, ruleId);
    await deletePolicyRule(reviewer, ruleId);
    return { ok: true };
  } catch (error) {
    return actionError(error);
  }
}

/** What would happen to a tool call in a queue now; writes nothing. */
export async function tryPolicyAction(
  input: unknown,
): Promise<ActionResult<{ result: TryPolicyResult }>> {
  try {
    const reviewer = await actionReviewer();
    // A trial call's args are walked like an agent's (canonical JSON): capped as the API caps them.
    assertJsonDepth(input, "(body)");
    assertWellFormedText(input);
    return { ok: true, result: await tryPolicy(reviewer, input) };
  } catch (error) {
    return actionError(error);
  }
}

/**
 * What a rule (as the rule forms send it, with the queue whose history to read) would have done
 * over the last 30 days, or the period given. Writes nothing; authorized as creating the rule.
 */
export async function backtestPolicyAction(
  input: unknown,
): Promise<ActionResult<{ report: BacktestReport }>> {
  try {
    const reviewer = await actionReviewer();
    assertJsonDepth(input, "(body)");
    assertWellFormedText(input);
    return { ok: true, report: await backtestPolicy(reviewer, input) };
  } catch (error) {
    return actionError(error);
  }
}

/** Hides a suggestion until its evidence changes (the queue's leads, admins). */
export async function dismissSuggestionAction(input: unknown): Promise<ActionResult> {
  try {
    await dismissSuggestion(await actionReviewer(), input);
    return { ok: true };
  } catch (error) {
    return actionError(error);
  }
}

/** Admins only (the verb checks): the mode holds in every queue the agent reaches. */
export async function setAgentModeAction(
  agentId: string,
  mode: unknown,
): Promise<ActionResult<{ agent: AgentKeyView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, agentId);
    return { ok: true, agent: await setAgentMode(reviewer, agentId, { mode }) };
  } catch (error) {
    return actionError(error);
  }
}
