import type { BatchResult } from "@/app/(reviewer)/actions";
import type { DecisionResult } from "@/components/review-card/index";
import type { Batch } from "@/components/review-card/types";

/**
 * A server action's answer as the card takes it, and the batch view to store: the new state on
 * success, the current one (who won, the new revision) on a conflict.
 */
export function toDecisionResult(result: BatchResult): {
  decision: DecisionResult;
  view: Batch | undefined;
} {
  if (result.ok) {
    const batch = result.batch as Batch;
    return { decision: { ok: true, batch }, view: batch };
  }
  const current = result.current;
  const view =
    current && typeof current === "object" && "calls" in current ? (current as Batch) : undefined;
  return {
    decision: { ok: false, code: result.code, message: result.message, current: view },
    view,
  };
}
