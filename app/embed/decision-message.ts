import type {
  Batch,
  BatchOutcome,
  BatchStatus,
  CallStatus,
  Decision,
} from "@/components/review-card/types";

/** What /embed/… posts to the page that frames it when a call or the batch is settled. */
export type DecisionMessage = {
  type: "countersign:decision";
  batchId: string;
  status: BatchStatus;
  outcome: BatchOutcome | null;
  calls: { id: string; status: CallStatus; decision: Decision | null }[];
};

export function decisionMessage(batch: Batch): DecisionMessage {
  return {
    type: "countersign:decision",
    batchId: batch.id,
    status: batch.status,
    outcome: batch.outcome,
    calls: batch.calls.map(({ id, status, decision }) => ({ id, status, decision })),
  };
}

/**
 * Changes only when a call or the batch settles: a vote short of the quorum, a claim or an edit
 * awaiting approval is not a decision, and the parent hears nothing for it.
 */
export function settlementKey(batch: Batch): string {
  return JSON.stringify([batch.status, batch.calls.map((call) => [call.id, call.status])]);
}

export type ParentHints = {
  /** the embed's own origin */
  self: string;
  /** the parent is a page of the app itself (its location is readable) */
  sameOriginParent: boolean;
  /** `location.ancestorOrigins[0]` where the browser has it (Chromium, Safari) */
  ancestorOrigin: string | null;
  /** `document.referrer`: the parent's URL or origin on the frame's first load */
  referrer: string;
};

/**
 * The target origins to post to: never "*", only the parent's origin when it is an allowed one.
 * When the parent cannot be told (no ancestorOrigins, the referrer lost to a sign-in inside the
 * frame) each allowed origin is tried, and the browser delivers only the one the parent has.
 */
export function messageTargets(allowed: string[], hints: ParentHints): string[] {
  if (hints.sameOriginParent) return [hints.self];
  const parent = hints.ancestorOrigin ?? originOf(hints.referrer);
  if (parent !== null && parent !== hints.self) return allowed.includes(parent) ? [parent] : [];
  return allowed;
}

function originOf(url: string): string | null {
  try {
    return url ? new URL(url).origin : null;
  } catch {
    return null;
  }
}
