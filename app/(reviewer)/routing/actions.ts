"use server";

import { actionError, type ActionResult } from "@/app/action-result";
import { InvalidRequestError } from "@/lib/errors";
import { createRule } from "@/lib/routing/create-rule";
import { deleteRule } from "@/lib/routing/delete-rule";
import type { RoutingRuleView } from "@/lib/routing/list-rules";
import { moveRule } from "@/lib/routing/move-rule";
import { updateRule } from "@/lib/routing/update-rule";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like every server action: the verbs check that the caller is an admin.

export async function createRuleAction(
  input: unknown,
): Promise<ActionResult<{ rule: RoutingRuleView }>> {
  try {
    return { ok: true, rule: await createRule(await actionReviewer(), input) };
  } catch (error) {
    return actionError(error);
  }
}

function checkRuleId(ruleId: unknown): asserts ruleId is string {
  if (typeof ruleId !== "string" || ruleId.length === 0 || ruleId.length > 200) {
    throw new InvalidRequestError("That is not a rule id.", [
      { path: "ruleId", message: "invalid" },
    ]);
  }
}

/** Changes the fields sent; `null` clears an optional condition. */
export async function updateRuleAction(
  ruleId: string,
  input: unknown,
): Promise<ActionResult<{ rule: RoutingRuleView }>> {
  try {
    checkRuleId(ruleId);
    return { ok: true, rule: await updateRule(await actionReviewer(), ruleId, input) };
  } catch (error) {
    return actionError(error);
  }
}

/** Moves a rule to place `to` (from 0) in the order the rules are tried. */
export async function moveRuleAction(
  ruleId: string,
  to: number,
): Promise<ActionResult<{ rules: RoutingRuleView[] }>> {
  try {
    checkRuleId(ruleId);
    return { ok: true, rules: await moveRule(await actionReviewer(), ruleId, { to }) };
  } catch (error) {
    return actionError(error);
  }
}

export async function deleteRuleAction(ruleId: string): Promise<ActionResult> {
  try {
    checkRuleId(ruleId);
    await deleteRule(await actionReviewer(), ruleId);
    return { ok: true };
  } catch (error) {
    return actionError(error);
  }
}
