import type { BatchView, CallView } from "@/lib/api/views";
import type { WireEvent } from "@/lib/events/wire";
import type { Tone } from "./badges";
import type { IconName } from "./icons";
import { formatAbsolute, plural } from "./format";

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
};

export function timelineContext(batches: BatchView[]): TimelineContext {
  const context: TimelineContext = {
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

export function describeEvent(event: WireEvent, context: TimelineContext): EventDescription {
  const data = event.data;
  const callTool = event.callId ? context.toolByCallId.get(event.callId) : undefined;
  const reportedId = text(data.toolCallId);
  const reportedTool = reportedId
    ? (context.toolByToolCallId.get(reportedId) ?? reportedId)
    : undefined;

  switch (event.type) {
    case "run.created":
      return { icon: "start", tone: "neutral", title: "Run started" };

    case "batch.created": {
      const batch = event.batchId ? context.batchById.get(event.batchId) : undefined;
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
        case "memory":
          return {
            ...base,
            title: "{code} approved automatically by a remembered approval",
            code: callTool,
          };
        case "policy":
          return {
            ...base,
            title: approved ? "{code} allowed by policy" : "{code} blocked by policy",
            code: callTool,
            reason: text(data.reason),
          };
        default:
          return {
            ...base,
            title: approved
              ? data.edited
                ? "Approved {code} with edits"
                : "Approved {code}"
              : "Rejected {code}",
            code: callTool,
            reason: text(data.reason),
          };
      }
    }

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
        note: lease ? `Lease until ${formatAbsolute(lease)}` : null,
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
        title: "Run completed",
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
    case "policy":
      return { text: approved ? "Allowed by policy" : "Blocked by policy", tone };
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
