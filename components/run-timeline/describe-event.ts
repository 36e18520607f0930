import { policyCause, policyModeDetail } from "@/components/review-card/decision-text";
import type { PolicyDecision } from "@/components/review-card/types";
import type { BatchView, CallView } from "@/lib/read-models/batch-run-views";
import type { WireEvent } from "@/lib/events/wire";
import type { Tone } from "./badges";
import type { IconName } from "./icons";
import { formatDateTime, type TimeFormat } from "@/lib/time/format";
import { plural } from "./format";

// What each event on a run's timeline says, kept pure so it reads the same everywhere.

export type EventDescription = {
  icon: IconName;
  tone: Tone;
  /** one line; `{code}` marks where `code` goes, e.g. "Approved {code}" */
  title: string;
  /** a tool's or a worker's name, shown in monospace */
  code?: string;
  /** what a person (or the agent) wrote: a decision's reason, a rollback's */
  reason?: string | null;
  /** a plain explanation of what the event means */
  note?: string | null;
  /** a JSON value worth expanding (a tool's result, an error, edited args) */
  payload?: { label: string; value: unknown };
};

/** Lookups the descriptions need, built once per run from its (visible) batches. */
export type TimelineContext = {
  batchById: Map<string, BatchView>;
  toolByCallId: Map<string, string>;
  /** the agent's own ids for its tool calls (tool.* events name these) */
  toolByToolCallId: Map<string, string>;
  /** the zone and locale the notes' times are written in (the viewer's) */
  timeFormat: TimeFormat;
};

export function timelineContext(
  batches: BatchView[],
  timeFormat: TimeFormat = { timeZone: "UTC" },
): TimelineContext {
  const context: TimelineContext = {
    timeFormat,
    batchById: new Map(),
    toolByCallId: new Map(),
    toolByToolCallId: new Map(),
  };
  for (const batch of batches) {
    context.batchById.set(batch.id, batch);
    for (const call of batch.calls) {
      context.toolByCallId.set(call.id, call.toolName);
      context.toolByToolCallId.set(call.toolCallId, call.toolName);
    }
  }
  return context;
}

const text = (value: unknown): string | null =>
  typeof value === "string" && value.length > 0 ? value : null;

const OUTCOME_TONE = { approved: "ok", rejected: "danger", mixed: "warn" } as const;

const SCOPE_PHRASE = { run: "this run", conversation: "this conversation" } as const;

function scopeOf(value: unknown): keyof typeof SCOPE_PHRASE | null {
  return value === "run" || value === "conversation" ? value : null;
}

/** An event's `policy` (what a policy decision stored), if it has that shape. */
function policyOf(value: unknown): PolicyDecision | null {
  if (typeof value !== "object" || value === null) return null;
  const policy = value as Partial<PolicyDecision>;
  const rule = policy.rule;
  const ruleOk = rule === null || (typeof rule === "object" && typeof rule?.name === "string");
  return typeof policy.agentMode === "string" && typeof policy.effect === "string" && ruleOk
    ? (policy as PolicyDecision)
    : null;
}

/**
 * A policy decision in a few words, after the tool's name: "approved by policy rule 'Scratch
 * writes'", "rejected: the agent's mode is deny". The cause reads as on the review card.
 */
export function policyOutcomeText(
  outcome: "approved" | "rejected" | "blocked",
  policy: PolicyDecision | null,
): string {
  const cause = policyCause(policy);
  if (cause?.kind === "rule") return `${outcome} by policy rule '${cause.name}'`;
  if (cause?.kind === "mode") return `${outcome}: ${cause.text}`;
  return `${outcome === "approved" ? "allowed" : "blocked"} by policy`;
}

export function describeEvent(event: WireEvent, context: TimelineContext): EventDescription {
  const data = event.data;
  // A call reviewers never saw (a blocked one) is not among the batches: its event names it.
  const callTool =
    (event.callId ? context.toolByCallId.get(event.callId) : undefined) ??
    text(data.toolName) ??
    undefined;
  const batch = event.batchId ? context.batchById.get(event.batchId) : undefined;
  const isPlanCall = batch?.kind === "plan" && callTool === "plan";
  const reportedId = text(data.toolCallId);
  const reportedTool = reportedId
    ? (context.toolByToolCallId.get(reportedId) ?? reportedId)
    : undefined;

  switch (event.type) {
    case "run.created":
      return { icon: "start", tone: "neutral", title: "Run started" };

    case "batch.created": {
      const where = batch ? ` in ${batch.queue.name}` : "";
      if (batch?.kind === "plan")
        return { icon: "pause", tone: "warn", title: `Paused for plan approval${where}` };
      const calls = batch ? `: ${plural(batch.calls.length, "call")} to review` : "";
      return { icon: "pause", tone: "warn", title: `Paused for approval${where}${calls}` };
    }

    case "call.voted": {
      const tally =
        typeof data.approvals === "number" && typeof data.requiredApprovals === "number"
          ? `${data.approvals} of ${data.requiredApprovals} approvals`
          : null;
      return {
        icon: "vote",
        tone: "ok",
        title: "Voted to approve {code}",
        code: callTool,
        note: tally,
      };
    }

    case "call.edited":
      if (isPlanCall) {
        const edited = data.editedArgs;
        const summary =
          typeof edited === "object" && edited !== null
            ? text((edited as Record<string, unknown>).summary)
            : null;
        return {
          icon: "edit",
          tone: "info",
          title: `Edited the plan's summary${typeof data.revision === "number" ? ` (revision ${data.revision})` : ""}`,
          reason: summary,
        };
      }
      return {
        icon: "edit",
        tone: "info",
        title: `Edited the arguments of {code}${typeof data.revision === "number" ? ` (revision ${data.revision})` : ""}`,
        code: callTool,
        payload: { label: "Edited arguments", value: data.editedArgs },
      };

    case "call.decided": {
      const approved = data.outcome === "approved";
      const base = {
        icon: approved ? "check" : "cross",
        tone: approved ? "ok" : "danger",
      } as const;
      switch (data.source) {
        case "timeout":
          return {
            ...base,
            icon: "clock",
            title: approved ? "{code} approved at the deadline" : "{code} rejected at the deadline",
            code: callTool,
            note: "Nobody decided in time; the batch's timeout rule settled it.",
          };
        case "memory": {
          const scope = scopeOf(data.scope);
          return {
            ...base,
            title: `{code} approved (remembered${scope ? ` for ${SCOPE_PHRASE[scope]}` : ""})`,
            code: callTool,
            note: "A reviewer approved the same action earlier; no one was asked again.",
          };
        }
        case "policy": {
          const policy = policyOf(data.policy);
          const byMode = policyCause(policy)?.kind === "mode";
          return {
            ...base,
            title: `{code} ${policyOutcomeText(approved ? "approved" : "rejected", policy)}`,
            code: callTool,
            // A mode's rejection reason restates the title; the note says what the mode does.
            reason: byMode ? null : text(data.reason),
            note: byMode && policy ? policyModeDetail(policy.agentMode) : null,
          };
        }
        default: {
          const scope = approved ? scopeOf(data.scope) : null;
          return {
            ...base,
            title: approved
              ? data.edited
                ? isPlanCall
                  ? "Approved the plan with an edited summary"
                  : "Approved {code} with edits"
                : "Approved {code}"
              : "Rejected {code}",
            code: callTool,
            reason: text(data.reason),
            note: scope ? `Remembered for ${SCOPE_PHRASE[scope]}.` : null,
          };
        }
      }
    }

    // Only on the agent's side of the run (reviewers never see a blocked call); an admin view
    // of the log may show it.
    case "call.blocked":
      return {
        icon: "ban",
        tone: "danger",
        title: `{code} ${policyOutcomeText("blocked", policyOf(data.policy))}`,
        code: callTool,
        reason: text(data.reason),
        note: "Blocked calls never reach a reviewer, and the agent must not run them.",
      };

    case "batch.decided":
    case "batch.expired": {
      const outcome = data.outcome as keyof typeof OUTCOME_TONE | undefined;
      const word =
        outcome === "mixed"
          ? "settled: some calls approved, some rejected"
          : (outcome ?? "settled");
      return event.type === "batch.expired"
        ? {
            icon: "clock",
            tone: "warn",
            title: `Batch expired, ${outcome ?? "settled"} by its timeout rule`,
          }
        : {
            icon: outcome === "approved" ? "check" : outcome === "rejected" ? "cross" : "dot",
            tone: outcome ? OUTCOME_TONE[outcome] : "neutral",
            title: `Batch ${word}`,
          };
    }

    case "batch.escalated":
      return { icon: "escalate", tone: "warn", title: "Escalated to another queue" };

    // "Not now" (lib/set-aside): out of one reviewer's queue view for a while; nothing decided
    case "batch.set_aside": {
      const who = event.actor.name ?? "a reviewer";
      const back = text(data.returnsAt);
      const span =
        data.for === "15m"
          ? "for 15 minutes"
          : data.for === "1h"
            ? "for 1 hour"
            : "until tomorrow morning";
      return {
        icon: "clock",
        tone: "neutral",
        title: `Set aside by ${who} ${span}`,
        note: back
          ? `Back in ${who}'s queue at ${formatDateTime(back, context.timeFormat)}${data.early ? ", sooner than chosen: the last fifth of its time begins then" : ""}. Others could still decide it meanwhile.`
          : null,
      };
    }

    case "batch.brought_back":
      return {
        icon: "clock",
        tone: "neutral",
        title: `Brought back early by ${event.actor.name ?? "a reviewer"}`,
      };

    case "batch.cancelled":
      return {
        icon: "ban",
        tone: "neutral",
        title: "Batch withdrawn by the agent",
        reason: text(data.reason),
      };

    case "run.claimed": {
      const lease = text(data.leaseExpiresAt);
      return {
        icon: "claim",
        tone: "info",
        title: "Claimed by worker {code}",
        code: text(data.workerId) ?? "(unnamed)",
        note: lease ? `Lease until ${formatDateTime(lease, context.timeFormat)}` : null,
      };
    }

    case "run.lease_expired":
      return {
        icon: "clock",
        tone: "warn",
        title: "The lease of worker {code} expired",
        code: text(data.workerId) ?? "(unnamed)",
        note: "The worker stopped renewing its lease; another may claim the run.",
      };

    case "call.used": {
      const earlier = text(data.fromRunId) !== event.runId;
      return {
        icon: "claim",
        tone: data.outcome === "approved" ? "ok" : "danger",
        title: earlier
          ? `Used the ${data.outcome === "approved" ? "approval" : "refusal"} of an earlier {code} call`
          : `The MCP gateway took the decision on {code}`,
        code: text(data.toolName) ?? "(tool)",
        note: earlier
          ? "The MCP gateway's identical call (same tool and arguments) picked up a decision nobody had used, from an earlier session; a decision is used once."
          : null,
      };
    }

    case "tool.completed":
      return {
        icon: "tool",
        tone: "ok",
        title: "Ran {code}",
        code: reportedTool,
        ...(data.result !== undefined && { payload: { label: "Result", value: data.result } }),
      };

    case "tool.failed":
      return {
        icon: "alert",
        tone: "danger",
        title: "{code} failed",
        code: reportedTool,
        ...(data.error !== undefined && { payload: { label: "Error", value: data.error } }),
      };

    case "action.reverted":
      return {
        icon: "rollback",
        tone: "info",
        title: "Reverted {code}",
        code: reportedTool,
        ...(data.result !== undefined && { payload: { label: "Result", value: data.result } }),
      };

    case "run.completed":
      return {
        icon: "flag",
        tone: "ok",
        // lib/runs/finish-mcp-run.ts: an MCP client read the decision; it runs the call itself
        title:
          (data.result as { via?: unknown } | undefined)?.via === "mcp"
            ? "Run completed: its MCP client read the decision"
            : "Run completed",
        ...(data.result !== undefined && { payload: { label: "Result", value: data.result } }),
      };

    case "run.failed":
      return {
        icon: "alert",
        tone: "danger",
        title: "Run failed",
        ...(data.error !== undefined && { payload: { label: "Error", value: data.error } }),
      };

    case "rollback.requested":
      return {
        icon: "rollback",
        tone: "warn",
        title: "Rollback requested",
        reason: text(data.reason),
      };

    // The callbackUrl webhook was given up on (lib/webhooks/deliver-webhooks.ts): the agent
    // will not be called back and must ask for the batch itself.
    case "webhook.failed":
      return {
        icon: "alert",
        tone: "danger",
        title: "Webhook to {code} failed for good",
        code: text(data.url) ?? undefined,
        note: [
          text(data.error),
          "Not retried: the agent must read the batch (GET /batches/{id}) or follow the run's stream.",
        ]
          .filter(Boolean)
          .join(". "),
      };

    default:
      return { icon: "dot", tone: "neutral", title: event.type };
  }
}

/** A call's decision in a few words, without the time: "Approved by Dana", "Pending · 1 of 2 approvals". */
export function callDecisionText(call: CallView): { text: string; tone: Tone } {
  const decision = call.decision;
  if (!decision) {
    if (call.status === "pending") {
      const approvals = call.votes.filter(
        (v) => v.revision === call.revision && v.outcome === "approved",
      ).length;
      return {
        text:
          call.requiredApprovals > 1
            ? `Pending · ${approvals} of ${call.requiredApprovals} approvals`
            : "Pending",
        tone: "warn",
      };
    }
    return { text: call.status === "cancelled" ? "Withdrawn" : call.status, tone: "neutral" };
  }
  const approved = decision.outcome === "approved";
  const tone = approved ? "ok" : "danger";
  const by = decision.by?.name ?? "a reviewer";
  switch (decision.source) {
    case "timeout":
      return { text: approved ? "Approved at the deadline" : "Rejected at the deadline", tone };
    case "memory":
      return { text: `Approved automatically (remembered from ${by})`, tone };
    case "policy": {
      const words = policyOutcomeText(
        approved ? "approved" : decision.policy?.blocked ? "blocked" : "rejected",
        decision.policy ?? null,
      );
      return { text: words.charAt(0).toUpperCase() + words.slice(1), tone };
    }
    default:
      return {
        text: approved
          ? decision.editedArgs != null
            ? `Approved with edits by ${by}`
            : `Approved by ${by}`
          : `Rejected by ${by}`,
        tone,
      };
  }
}
