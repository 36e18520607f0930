import type { ModelMessage, ToolResultPart } from "ai";
import { callRejectionMessage } from "../rejection.js";
import type { Batch, Call } from "../types.js";

// Reading the AI SDK's message parts: which tool approval requests are still unanswered, which
// tool results the SDK produced, and the words a decision is given to the model in.

/** A `tool-approval-request` that no `tool-approval-response` answered yet. */
export type PendingApproval = {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  /** the tool call's input, as the model produced it */
  input: unknown;
  /** the provider runs the tool (its approval response must say so) */
  providerExecuted: boolean;
};

/** What a generateText / streamText / ToolLoopAgent result offers (streamText's fields are promises). */
export type ResultLike = {
  content: ReadonlyArray<{ type: string }> | PromiseLike<ReadonlyArray<{ type: string }>>;
  response?: { messages: ModelMessage[] } | PromiseLike<{ messages: ModelMessage[] }>;
};

type ApprovalRequestContent = {
  type: "tool-approval-request";
  approvalId: string;
  toolCall: { toolCallId: string; toolName: string; input: unknown; providerExecuted?: boolean };
};

/** The approval requests of a result's last step. */
export async function pendingInResult(result: ResultLike): Promise<PendingApproval[]> {
  const content = await result.content;
  return content
    .filter((part): part is ApprovalRequestContent => part.type === "tool-approval-request")
    .map(({ approvalId, toolCall }) => ({
      approvalId,
      toolCallId: toolCall.toolCallId,
      toolName: toolCall.toolName,
      input: toolCall.input,
      providerExecuted: toolCall.providerExecuted ?? false,
    }));
}

/** The approval requests of a conversation that no later response or tool result answered. */
export function pendingInMessages(messages: ModelMessage[]): PendingApproval[] {
  const calls = new Map<string, { toolName: string; input: unknown; providerExecuted: boolean }>();
  const requests: { approvalId: string; toolCallId: string }[] = [];
  const answered = new Set<string>();
  const resulted = new Set<string>();
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type === "tool-call")
        calls.set(part.toolCallId, {
          toolName: part.toolName,
          input: part.input,
          providerExecuted: part.providerExecuted ?? false,
        });
      else if (part.type === "tool-approval-request") requests.push(part);
      else if (part.type === "tool-approval-response") answered.add(part.approvalId);
      else if (part.type === "tool-result") resulted.add(part.toolCallId);
    }
  }
  return requests
    .filter((r) => !answered.has(r.approvalId) && !resulted.has(r.toolCallId))
    .map((request) => {
      const call = calls.get(request.toolCallId);
      // The SDK refuses such a conversation too (ToolCallNotFoundForApprovalError).
      if (!call)
        throw new Error(
          `Countersign: approval ${request.approvalId} names tool call ${request.toolCallId}, which is not in the messages.`,
        );
      return { approvalId: request.approvalId, toolCallId: request.toolCallId, ...call };
    });
}

/** Every `tool-result` part in the tool messages of `messages`. */
export function toolResultsIn(messages: ModelMessage[]): ToolResultPart[] {
  return messages.flatMap((message) =>
    message.role === "tool"
      ? message.content.filter((part): part is ToolResultPart => part.type === "tool-result")
      : [],
  );
}

/** What to report for a tool result: its value, whether it is an error, or null (not run). */
export function reportable(
  output: ToolResultPart["output"],
): { failed: boolean; value: unknown } | null {
  switch (output.type) {
    case "execution-denied":
      return null;
    case "error-text":
    case "error-json":
      return { failed: true, value: output.value };
    default:
      return { failed: false, value: output.value };
  }
}

/** The `reason` of an approved call's response (kept in the messages; the model never sees it). */
export function approvalReason(call: Call): string {
  const decision = call.decision;
  const said = decision?.reason ? `: ${decision.reason.trim()}` : "";
  switch (decision?.source) {
    case "reviewer":
      return `Approved by ${decision.by?.name ?? "a reviewer"}${said}`;
    case "policy":
      return `Approved by ${decision.policy?.rule ? `the policy rule “${decision.policy.rule.name}”` : "policy"}${said}`;
    case "memory":
      return `Approved by a remembered approval${said}`;
    case "timeout":
      return "Approved when its deadline passed (onTimeout: approve)";
    default:
      return "Approved";
  }
}

/**
 * The `reason` of a call that was not approved, worded for the model: the AI SDK hands it over in
 * the call's `execution-denied` result. The same sentences as gate's GateRejection.message.
 */
export function denialReason(call: Call | null, batch: Batch | null, waitedOut: boolean): string {
  if (waitedOut)
    return "No reviewer decided in time, so the approval request was withdrawn. The tool was not run.";
  return callRejectionMessage(call, batch);
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value as JSON the server can store (undefined stays undefined). */
export function asJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}
