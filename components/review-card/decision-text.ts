import { formatAgo, isRecord, parseTime } from "./format";
import type { Call, Decision, PolicyDecision, Ref, TimeoutAction, Vote } from "./types";

// The card's sentences, kept pure so they are tested directly and read the same everywhere.

export type DecisionDescription = {
  /** "Approved by Dana, 4 s ago" */
  headline: string;
  /** a reviewer's or policy's reason, as written */
  reason: string | null;
  /** context such as "Remembered for this run" */
  detail: string | null;
};

const SCOPE_PHRASE = { run: "this run", conversation: "this conversation" } as const;

/** "you", a reviewer's name, or "a reviewer". */
export function reviewerName(by: Ref | null, viewerId?: string): string {
  if (!by) return "a reviewer";
  return by.id === viewerId ? "you" : by.name;
}

export function describeDecision(
  decision: Decision,
  /** null: no "N s ago" (where the time is already shown beside it) */
  nowMs: number | null,
  viewerId?: string,
): DecisionDescription {
  const at = parseTime(decision.at);
  const ago = at === null || nowMs === null ? "" : `, ${formatAgo(at, nowMs)}`;
  const approved = decision.outcome === "approved";
  const verb = approved ? "Approved" : "Rejected";
  const scope =
    decision.scope === "run" || decision.scope === "conversation" ? decision.scope : null;

  switch (decision.source) {
    case "timeout":
      // The server's reason restates the rule; the headline already says it.
      return {
        headline: `${verb} automatically at the deadline${ago}`,
        reason: null,
        detail: approved ? "The request allowed approval when no one decided in time." : null,
      };
    case "policy":
      return describePolicyDecision(decision, ago);
    case "memory": {
      const approver = reviewerName(decision.by, viewerId);
      const capitalized = approver.charAt(0).toUpperCase() + approver.slice(1);
      const where = scope ? ` in ${SCOPE_PHRASE[scope]}` : "";
      return {
        headline: `Approved automatically${ago}`,
        reason: null,
        detail: `${capitalized} approved the same action earlier${where}.`,
      };
    }
    case "reviewer": {
      const edited = approved && isRecord(decision.editedArgs);
      return {
        headline: `${edited ? "Approved with edits" : verb} by ${reviewerName(decision.by, viewerId)}${ago}`,
        reason: decision.reason,
        detail: approved && scope ? `Remembered for ${SCOPE_PHRASE[scope]}.` : null,
      };
    }
  }
}

/**
 * What settled a call by policy: the rule that allowed or blocked it, or the agent's mode (`off`,
 * `allow`, `deny`) when that, not a rule, decided. Null for older decisions that do not say.
 * Shared with the run timeline, so the card and the run page give the same cause.
 */
export function policyCause(
  policy: PolicyDecision | null | undefined,
): { kind: "rule"; name: string } | { kind: "mode"; text: string } | null {
  if (!policy) return null;
  if (policy.agentMode === "off") return { kind: "mode", text: "the agent's gate is off" };
  // Under mode allow a matching allow rule would have approved on its own: name the rule. An ask
  // rule (the mode overrode it) or no rule at all leaves the mode as the cause.
  if (policy.rule && (policy.blocked || policy.effect === "allow"))
    return { kind: "rule", name: policy.rule.name };
  if (policy.agentMode === "allow" || policy.agentMode === "deny")
    return { kind: "mode", text: `the agent's mode is ${policy.agentMode}` };
  return null;
}

const MODE_DETAIL = {
  off: "The agent's gate is off: its calls are approved without review.",
  allow: "The agent's mode approves its calls without review unless a rule blocks them.",
  deny: "The agent's mode rejects its calls that would need a reviewer.",
  ask: null,
} as const;

/** What an agent's mode does, when the mode (not a rule) settled a call. */
export function policyModeDetail(mode: PolicyDecision["agentMode"]): string | null {
  return MODE_DETAIL[mode];
}

function describePolicyDecision(decision: Decision, ago: string): DecisionDescription {
  const approved = decision.outcome === "approved";
  const policy = decision.policy;
  const cause = policyCause(policy);
  if (cause?.kind === "rule") {
    return {
      headline: `${approved ? "Allowed" : "Blocked"} by policy '${cause.name}'${ago}`,
      reason: decision.reason,
      detail: null,
    };
  }
  if (cause?.kind === "mode" && policy) {
    // The server's reason for a mode-deny rejection restates the mode; the headline says it.
    return {
      headline: `${approved ? "Approved" : "Rejected"}: ${cause.text}${ago}`,
      reason: null,
      detail: policyModeDetail(policy.agentMode),
    };
  }
  return {
    headline: `${approved ? "Allowed" : "Blocked"} by policy${ago}`,
    reason: decision.reason,
    detail: null,
  };
}

/**
 * Who made the edit a call was approved with: the first approval of its last revision (an edit
 * opens a new revision with its author's vote). Under a quorum this need not be the decider.
 */
export function editorOf(call: Call): Ref | null {
  const first = call.votes
    .filter((vote) => vote.revision === call.revision && vote.outcome === "approved")
    .sort((a, b) => a.at.localeCompare(b.at))[0];
  return first?.reviewer ?? call.decision?.by ?? null;
}

/** One line: "Rejected by Sam, 4 s ago: too risky". */
export function decisionText(decision: Decision, nowMs: number, viewerId?: string): string {
  const { headline, reason } = describeDecision(decision, nowMs, viewerId);
  return reason ? `${headline}: ${reason}` : headline;
}

/** What the deadline does, said before it happens. */
export function timeoutRuleText(onTimeout: TimeoutAction): string {
  switch (onTimeout) {
    case "approve":
      return "Approved automatically at the deadline";
    case "escalate":
      return "Escalated at the deadline";
    case "reject":
      return "Rejected automatically at the deadline";
  }
}

export type VoteSummary = {
  /** "1 of 2 approvals" */
  tally: string;
  /** approvals of the current revision, in order */
  approvers: Vote[];
  /** approvals of an earlier revision, which an edit made void */
  superseded: Vote[];
  /** the viewer voted on the current revision, so they cannot vote again */
  viewerVoted: boolean;
};

export function summarizeVotes(call: Call, viewerId?: string): VoteSummary {
  const current = call.votes.filter((v) => v.revision === call.revision);
  const approvers = current.filter((v) => v.outcome === "approved");
  const superseded = call.votes.filter(
    (v) => v.revision < call.revision && v.outcome === "approved",
  );
  return {
    tally: `${approvers.length} of ${call.requiredApprovals} approval${call.requiredApprovals === 1 ? "" : "s"}`,
    approvers,
    superseded,
    viewerVoted: viewerId !== undefined && current.some((v) => v.reviewer.id === viewerId),
  };
}

/** The notice shown in place when the host reports that someone else moved first. */
export function conflictText(
  code: string,
  call: Call | undefined,
  serverMessage: string,
  nowMs: number,
  viewerId?: string,
): string {
  // The notice outlives the moment: once the call is settled, say how, whatever the code was.
  if (call?.decision) {
    const lead = call.decision.source === "reviewer" ? "Already decided" : "No longer pending";
    return `${lead}: ${decisionText(call.decision, nowMs, viewerId)}.`;
  }
  if (code === "stale_revision") {
    const revision = call ? ` (revision ${call.revision})` : "";
    return `This call changed since you loaded it — review the new version${revision}.`;
  }
  if (call && call.status !== "pending") return `This call is ${call.status}.`;
  return serverMessage;
}
