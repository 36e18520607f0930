import type { Batch, Call } from "./types.js";

// What a model reads when its tool call did not run: one wording for gate() and every adapter,
// so an agent hears the same sentences whichever framework it runs in.

export type RejectionSource = "reviewer" | "policy" | "memory" | "timeout" | "cancelled";

export type RejectionFacts = {
  source: RejectionSource | null;
  /** a policy rule blocked the call */
  blocked?: boolean;
  /** the reviewer's reason, the server's policy wording, or why the request was withdrawn */
  reason?: string | null;
  /** named when an adapter wants the model to know who refused */
  reviewerName?: string | null;
};

const NOT_RUN = " The tool was not run.";

function sentence(text: string): string {
  return `${text.trim().replace(/[.\s]+$/, "")}.`;
}

export function rejectionMessage({
  source,
  blocked,
  reason,
  reviewerName,
}: RejectionFacts): string {
  const why = reason?.trim() || null;
  const because = why ? `: ${sentence(why)}` : ".";
  // The server words policy refusals for the model already ("Blocked by policy rule …").
  if (blocked || source === "policy") return `${why ?? "A policy blocked this call."}${NOT_RUN}`;
  if (source === "timeout")
    return `No reviewer approved this call before its deadline, so it was rejected.${NOT_RUN}`;
  if (source === "cancelled")
    return `The approval request was withdrawn before a decision${because}${NOT_RUN}`;
  if (source === "reviewer") {
    const who = reviewerName ? `The reviewer, ${reviewerName},` : "The reviewer";
    return why
      ? `${who} rejected this call${because}${NOT_RUN}`
      : `${who} rejected this call without giving a reason.${NOT_RUN}`;
  }
  return `This call was rejected${because}${NOT_RUN}`;
}

/** The facts of a settled call that was not approved (a missing call counts as withdrawn). */
export function rejectionFacts(
  call: Call | null | undefined,
  batch: Batch | null,
  { nameReviewer = false }: { nameReviewer?: boolean } = {},
): RejectionFacts {
  const decision = call?.decision ?? null;
  if (call?.status === "expired" || decision?.source === "timeout") return { source: "timeout" };
  if (!call || !decision || call.status === "cancelled" || batch?.status === "cancelled")
    return { source: "cancelled", reason: batch?.cancelReason ?? null };
  return {
    source: decision.source,
    blocked: decision.policy?.blocked ?? false,
    reason: decision.reason,
    reviewerName: nameReviewer ? (decision.by?.name ?? null) : null,
  };
}

/** rejectionMessage for a call as the API answers it. */
export function callRejectionMessage(
  call: Call | null | undefined,
  batch: Batch | null,
  options?: { nameReviewer?: boolean },
): string {
  return rejectionMessage(rejectionFacts(call, batch, options));
}
