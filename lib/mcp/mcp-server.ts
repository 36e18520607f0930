import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import type { AgentActor } from "@/lib/auth/actor";
import { asApiError } from "@/lib/errors";
import { ApprovalResult, approvalResult, describeApproval } from "./approval-result";
import {
  GetApprovalInput,
  RequestApprovalInput,
  getApproval,
  requestApproval,
} from "./approval-tools";
import { log } from "@/lib/log/logger";

const INSTRUCTIONS =
  "Countersign is where you ask a person for permission. Before you run a tool call that is risky " +
  "(spends money, deletes or overwrites data, sends messages on someone's behalf, merges or deploys " +
  "code, changes access), call request_approval with that exact call. Run it only once it is " +
  "approved, and then with argsToRun. If it is rejected, do not run it; tell the user why. If it is " +
  "pending, do not run it yet: call get_approval with its batchId until it is decided.";

/**
 * One MCP server for one request of one agent (stateless: nothing lives past the request). The
 * agent is already authenticated; the tools act as it.
 */
export function createMcpServer(agent: AgentActor, signal?: AbortSignal): McpServer {
  const server = new McpServer(
    { name: "countersign", title: "Countersign", version: "1.0.0" },
    { instructions: INSTRUCTIONS },
  );

  server.registerTool(
    "request_approval",
    {
      title: "Ask a person to approve a tool call",
      description:
        "Ask a human reviewer for permission before you run a risky tool call (spending money, " +
        "deleting or overwriting data, sending messages, merging or deploying code, changing " +
        "access). Give the exact toolName and args you intend to run, a one-line summary and its " +
        "risks. The answer's status and text tell you what to do: approved — run the call with " +
        "argsToRun (a reviewer may have edited the args: use theirs); rejected — do not run it, " +
        "the reason says why; pending — do not run it yet, call get_approval with the batchId " +
        "later. Team policies may approve or block a call at once. Set wait (seconds) to hold " +
        "for the decision in this same call.",
      inputSchema: RequestApprovalInput,
      outputSchema: ApprovalResult,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    },
    (input) => answer(() => requestApproval(agent, input, signal)),
  );

  server.registerTool(
    "get_approval",
    {
      title: "Check an approval request",
      description:
        "Check the decision on an approval you asked for with request_approval, by its batchId. " +
        "Set wait (seconds) to hold until it is decided. Run the call only when the answer says " +
        "approved, and then with argsToRun; rejected, expired or cancelled means do not run it; " +
        "pending means ask again later.",
      inputSchema: GetApprovalInput,
      outputSchema: ApprovalResult,
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    (input) => answer(() => getApproval(agent, input, signal)),
  );

  return server;
}

/**
 * The tool's answer: the batch as structured content plus its reading in words. The contract's
 * errors (400, 404, 409 …) are tool errors the model can read and act on, not protocol failures.
 */
async function answer(work: () => Promise<BatchView>): Promise<CallToolResult> {
  try {
    const batch = await work();
    return {
      content: [{ type: "text", text: describeApproval(batch) }],
      structuredContent: approvalResult(batch),
    };
  } catch (error) {
    return { isError: true, content: [{ type: "text", text: errorText(error) }] };
  }
}

function errorText(caught: unknown): string {
  const error = asApiError(caught);
  if (!error) {
    log().error({ err: caught }, "Unexpected error in an MCP tool");
    return "Something went wrong on Countersign's side (internal_error). Try again shortly.";
  }
  const issues = (error.extra.issues as { path: string; message: string }[] | undefined) ?? [];
  const detail =
    issues.length > 1 ? ` Issues: ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}.` : "";
  return `${error.message} (${error.code})${detail}`;
}
