"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { Id } from "@/lib/ids";
import { createRule } from "@/lib/routing/create-rule";
import { deleteRule } from "@/lib/routing/delete-rule";
import { moveRule } from "@/lib/routing/move-rule";
import { updateRule } from "@/lib/routing/update-rule";

// Public endpoints like every server action: the verbs check that the caller is an admin.

export const createRuleAction = reviewerAction([z.unknown()], async (reviewer, [input]) => ({
  rule: await createRule(reviewer, input),
}));

/** Changes the fields sent; `null` clears an optional condition. */
export const updateRuleAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [ruleId, input]) => ({ rule: await updateRule(reviewer, ruleId, input) }),
);

/** Moves a rule to place `to` (from 0) in the order the rules are tried. */
export const moveRuleAction = reviewerAction([Id, z.unknown()], async (reviewer, [ruleId, to]) => ({
  rules: await moveRule(reviewer, ruleId, { to }),
}));

export const deleteRuleAction = reviewerAction([Id], async (reviewer, [ruleId]) => {
  await deleteRule(reviewer, ruleId);
  return {};
});
