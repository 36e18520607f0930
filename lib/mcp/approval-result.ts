import { z } from "zod";
import { BATCH_OUTCOMES, BATCH_STATUSES, CALL_STATUSES, DECISION_SOURCES } from "@/db/schema";
import type { BatchView, CallView } from "@/lib/read-models/batch-run-views";

// What the MCP tools answer: a batch as structured content a program can use, and one short text
// an LLM reads and acts on. The text always says whether to run the call, and with which args.

const Args = z.record(z.string(), z.unknown());

export const McpDecision = z.object({
  outcome: z.enum(["approved", "rejected"]),
  source: z
    .enum(DECISION_SOURCES)
    .describe("reviewer, policy, memory (a remembered approval) or timeout"),
  reason: z.string().nullable(),
  editedArgs: Args.nullable().describe(
    "when a reviewer approved with an edit: the args to run instead",
  ),
  by: z.object({ id: z.string(), name: z.string() }).nullable(),
  policyRule: z.string().nullable().describe("when a policy rule decided: its name"),
  blocked: z.boolean().describe("a deny rule blocked the call: it never reached a reviewer"),
});
export type McpDecision = z.infer<typeof McpDecision>;

const McpCall = z.object({
  callId: z.string(),
  toolName: z.string(),
  status: z.enum(CALL_STATUSES),
  decision: McpDecision.nullable(),
  argsToRun: Args.nullable(),
});

export const ApprovalResult = z.object({
  runId: z.string(),
  batchId: z.string(),
  status: z.enum(BATCH_STATUSES),
  outcome: z.enum(BATCH_OUTCOMES).nullable(),
  reviewUrl: z.string(),
  queue: z.string().describe("the queue whose reviewers decide"),
  expiresAt: z.string().describe("the deadline; at it the onTimeout fallback applies"),
  decision: McpDecision.nullable().describe("the decision of the batch's call, once there is one"),
  argsToRun: Args.nullable().describe(
    "once approved: exactly the args to run (the reviewer's edit when there was one); else null",
  ),
  calls: z
    .array(McpCall)
    .optional()
    .describe("only for batches with other than one call (made through the HTTP API)"),
});
export type ApprovalResult = z.infer<typeof ApprovalResult>;

function decisionOf(call: CallView): McpDecision | null {
  const decision = call.decision;
  if (!decision) return null;
  return {
    outcome: decision.outcome,
    source: decision.source,
    reason: decision.reason,
    editedArgs: (decision.editedArgs as Record<string, unknown> | null) ?? null,
    by: decision.by,
    policyRule: decision.policy?.rule?.name ?? null,
    blocked: decision.policy?.blocked ?? false,
  };
}

function argsToRun(call: CallView): Record<string, unknown> | null {
  if (call.decision?.outcome !== "approved") return null;
  return (call.decision.editedArgs as Record<string, unknown> | null) ?? call.args;
}

/** The batch (as its agent sees it) in the tools' structured shape. */
export function approvalResult(batch: BatchView): ApprovalResult {
  const only = batch.calls.length === 1 ? batch.calls[0]! : null;
  return {
    runId: batch.runId,
    batchId: batch.id,
    status: batch.status,
    outcome: batch.outcome,
    reviewUrl: batch.reviewUrl,
    queue: batch.queue.name,
    expiresAt: batch.expiresAt,
    decision: only ? decisionOf(only) : null,
    argsToRun: only ? argsToRun(only) : null,
    ...(!only && {
      calls: batch.calls.map((call) => ({
        callId: call.id,
        toolName: call.toolName,
        status: call.status,
        decision: decisionOf(call),
        argsToRun: argsToRun(call),
      })),
    }),
  };
}

/** The line the model reads: the outcome, who decided, and what to do next. */
export function describeApproval(batch: BatchView): string {
  if (batch.status === "pending") {
    const what = batch.calls.map((call) => call.toolName).join(", ") || "the plan";
    return (
      `Pending: a reviewer in queue '${batch.queue.name}' has been asked to approve ${what}. ` +
      `Do not run it yet. Call get_approval with batchId "${batch.id}" later (with wait to hold ` +
      `for the decision) until it is decided. It expires at ${batch.expiresAt}. ` +
      `Review page: ${batch.reviewUrl}`
    );
  }
  if (batch.status === "cancelled") {
    const why = batch.cancelReason ? ` (${batch.cancelReason})` : "";
    return `Cancelled${why}: the request was withdrawn — do not run it.`;
  }
  if (batch.calls.length === 0) {
    return batch.outcome === "approved"
      ? "Approved: the plan may go ahead."
      : `Not approved (${batch.outcome ?? batch.status}): do not carry out the plan.`;
  }
  return batch.calls.map(describeCall).join("\n");
}

function describeCall(call: CallView): string {
  const decision = call.decision;
  const tool = call.toolName;
  if (!decision) return `${tool} was not decided (${call.status}) — do not run it.`;
  if (decision.outcome === "approved") {
    const args = JSON.stringify(argsToRun(call));
    const edited = decision.editedArgs != null;
    const run = edited
      ? `run ${tool} with these edited args, not the ones you asked for: ${args}`
      : `run ${tool} with these args: ${args}`;
    return `Approved by ${approver(call)}: ${run}`;
  }
  switch (decision.source) {
    case "policy":
      return `Rejected by policy — do not run ${tool}. ${decision.reason ?? ""}`.trim();
    case "timeout":
      return `Rejected: nobody decided before the deadline, so it failed closed — do not run ${tool}.`;
    default: {
      const why = decision.reason ? `: ${decision.reason}` : " (no reason given)";
      return `Rejected by ${decision.by?.name ?? "a reviewer"}${why} — do not run ${tool}.`;
    }
  }
}

function approver(call: CallView): string {
  const decision = call.decision!;
  switch (decision.source) {
    case "policy":
      return decision.policy?.rule
        ? `policy '${decision.policy.rule.name}'`
        : `policy (the agent's mode is ${decision.policy?.agentMode ?? "allow"})`;
    case "memory":
      return `a remembered approval${decision.by ? ` from ${decision.by.name}` : ""}`;
    case "timeout":
      return "default at the deadline (the request asked to approve on timeout)";
    default:
      return decision.by?.name ?? "a reviewer";
  }
}
