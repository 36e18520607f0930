import { isRecord } from "./format";
import type { Call } from "./types";

export type ShownCost = {
  amount: number;
  currency: string;
  /** the agent's estimate, when an edit changed the amount shown */
  before?: number;
  /** an edit changed the args but not in a way the estimate can follow: it is the agent's */
  beforeEdit?: boolean;
};

/** The args that run (or will, once the quorum agrees): an approved or a pending edit, if any. */
function editedArgs(call: Call): Record<string, unknown> | null {
  if (call.decision?.outcome === "approved" && isRecord(call.decision.editedArgs)) {
    return call.decision.editedArgs;
  }
  if (call.status === "pending" && isRecord(call.pendingEdit)) return call.pendingEdit;
  return null;
}

/**
 * The cost of the call as it will run. The agent estimates the cost of its own args; when a
 * reviewer's edit changes them, showing that estimate would state the pre-edit cost as if it were
 * the edited call's (issue 18: "$42.00" after the refund was edited to 10). When the estimate is
 * exactly one top-level number argument (a refund's `amount`) and the edit changed that number,
 * the edited number is the edited call's cost; otherwise an edit that changed the args marks the
 * estimate as the agent's, from before the edit.
 */
export function shownCost(call: Call): ShownCost | null {
  if (call.costEstimate === null) return null;
  const currency = call.costCurrency ?? "USD";
  const estimate = call.costEstimate;
  const edited = editedArgs(call);
  if (!edited) return { amount: estimate, currency };
  const costKeys = Object.keys(call.args).filter((key) => call.args[key] === estimate);
  const [key] = costKeys;
  if (costKeys.length === 1 && key !== undefined) {
    const after = edited[key];
    if (typeof after === "number" && Number.isFinite(after) && after >= 0) {
      return after === estimate
        ? { amount: estimate, currency }
        : { amount: after, currency, before: estimate };
    }
  }
  const changed = JSON.stringify(edited) !== JSON.stringify(call.args);
  return changed
    ? { amount: estimate, currency, beforeEdit: true }
    : { amount: estimate, currency };
}
