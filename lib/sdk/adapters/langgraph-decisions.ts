import type {
  ActionRequest,
  DecisionType,
  Decision as HitlDecision,
  HITLRequest,
  ReviewConfig,
} from "langchain";
import { AIMessage, type ToolCall } from "@langchain/core/messages";
import { callRejectionMessage } from "../rejection.js";
import type { Batch, Call, CallInput } from "../types.js";

// The pure half of the LangGraph adapter: a human-in-the-loop interrupt's action requests become
// Countersign calls, and a settled batch becomes the middleware's resume decisions. No I/O here.

/** One action request of an interrupt, with the id and review settings it is asked under. */
export type PendingAction = {
  toolCallId: string;
  action: ActionRequest;
  /** what the middleware accepts for this action (its reviewConfig's allowedDecisions) */
  allowed: readonly DecisionType[];
  argsSchema?: Record<string, unknown>;
};

/** The extra card fields a caller may give per action. */
export type CallDetails = Partial<
  Pick<CallInput, "summary" | "risks" | "costEstimate" | "metadata">
>;

/** A decision Countersign reached that the tool's `allowedDecisions` cannot carry back. */
export class DecisionNotAllowedError extends Error {
  constructor(
    readonly toolName: string,
    readonly toolCallId: string,
    readonly wanted: DecisionType,
    readonly allowed: readonly DecisionType[],
    detail: string,
  ) {
    super(
      `Countersign: the decision on ${toolName} (${toolCallId}) was '${wanted}', which its interruptOn config does not allow (allowedDecisions: ${allowed.join(", ") || "none"}). ${detail}`,
    );
    this.name = "DecisionNotAllowedError";
  }
}

const ALL_DECISIONS: readonly DecisionType[] = ["approve", "edit", "reject"];
/** The API's limit on a call's summary. */
const MAX_SUMMARY = 4000;
const MAX_TOOL_CALL_ID = 200;

/** The actions of `requests` in order, each with its review settings and a Countersign id. */
export function pendingActions(
  requests: readonly HITLRequest[],
  toolCallIds: readonly (string | undefined)[],
  newId: (name: string) => string,
): PendingAction[] {
  const used = new Set<string>();
  let position = 0;
  return requests.flatMap((request) =>
    request.actionRequests.map((action, index) => {
      const review = reviewConfigFor(request.reviewConfigs, action, index);
      let toolCallId = toolCallIds[position++];
      // A batch refuses duplicate or overlong ids; a made-up one only loses the link to LangGraph's.
      if (!toolCallId || used.has(toolCallId) || toolCallId.length > MAX_TOOL_CALL_ID)
        toolCallId = newId(action.name);
      used.add(toolCallId);
      return {
        toolCallId,
        action,
        allowed: review?.allowedDecisions ?? ALL_DECISIONS,
        argsSchema: review?.argsSchema,
      };
    }),
  );
}

/** The middleware pairs reviewConfigs with actionRequests by position; by name is the fallback. */
function reviewConfigFor(
  configs: readonly ReviewConfig[] | undefined,
  action: ActionRequest,
  index: number,
): ReviewConfig | undefined {
  const paired = configs?.[index];
  if (paired?.actionName === action.name) return paired;
  return configs?.find((config) => config.actionName === action.name);
}

export function callInput(
  pending: PendingAction,
  inputSchema: Record<string, unknown> | undefined,
  details: CallDetails = {},
): CallInput {
  const { action, allowed } = pending;
  const notes = [
    // Reviewers can always edit and reject on the card: say what the agent will do with them.
    !allowed.includes("edit") &&
      "This tool accepts no edited calls: an approval with changes reaches the agent as a rejection.",
    !allowed.includes("reject") &&
      "This tool accepts no rejections: rejecting it stops the agent with an error.",
  ].filter(Boolean);
  const summary = [details.summary ?? action.description, ...notes].filter(Boolean).join("\n\n");
  const schema = pending.argsSchema ?? inputSchema;
  return {
    toolCallId: pending.toolCallId,
    toolName: action.name,
    args: action.args,
    inputSchema: schema && withoutDialect(schema),
    summary: summary ? clip(summary, MAX_SUMMARY) : undefined,
    risks: details.risks,
    costEstimate: details.costEstimate,
    metadata: { ...details.metadata, langgraph: { allowedDecisions: [...allowed] } },
  };
}

/**
 * The server compiles schemas as draft-07 and refuses an unknown `$schema` (zod and LangChain
 * emit 2020-12); the keywords tool schemas use mean the same in both.
 */
function withoutDialect(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema, ...rest } = schema;
  return rest;
}

/**
 * The resume decisions for `pending`, in order, from the settled batch. `batch` is null (or its
 * calls are missing) when the request was withdrawn without a decision: every action is refused.
 * Throws DecisionNotAllowedError when a refusal cannot be said to the middleware (no `reject`).
 */
export function decisionsFrom(
  batch: Batch | null,
  pending: readonly PendingAction[],
  how: { waitedOut?: boolean } = {},
): HitlDecision[] {
  return pending.map((item) => {
    const call = batch?.calls.find((c) => c.toolCallId === item.toolCallId);
    if (!call || how.waitedOut) {
      return refuse(
        item,
        "No reviewer decided in time, so the approval request was withdrawn. The tool was not run.",
      );
    }
    return decisionFor(call, item, batch);
  });
}

function decisionFor(call: Call, item: PendingAction, batch: Batch | null): HitlDecision {
  const { action, allowed } = item;
  if (call.status !== "approved")
    return refuse(item, callRejectionMessage(call, batch, { nameReviewer: true }));
  const edited = editedArgs(call, action.args);
  if (!edited) {
    if (allowed.includes("approve")) return { type: "approve" };
    // The same call, said as an edit: the only way left to run it unchanged.
    if (allowed.includes("edit"))
      return { type: "edit", editedAction: { name: action.name, args: action.args } };
    return refuse(
      item,
      "The reviewer approved this call, but this tool's review settings accept no approvals, so it was not run.",
    );
  }
  if (allowed.includes("edit"))
    return { type: "edit", editedAction: { name: action.name, args: edited } };
  // Running the original args would run what the reviewer did not approve: refuse, and tell
  // the model what was approved so it can ask again with exactly that.
  return refuse(
    item,
    `The reviewer approved this call only with these arguments: ${JSON.stringify(edited)}. This tool does not accept edited calls, so it was not run; call it again with those arguments if they still serve the task.`,
  );
}

function refuse(item: PendingAction, message: string): HitlDecision {
  if (item.allowed.includes("reject")) return { type: "reject", message };
  throw new DecisionNotAllowedError(
    item.action.name,
    item.toolCallId,
    "reject",
    item.allowed,
    `Not approved: ${message}`,
  );
}

/** The reviewer's args when they differ from the agent's, else null. */
function editedArgs(call: Call, asked: Record<string, unknown>): Record<string, unknown> | null {
  const edited = call.decision?.editedArgs;
  if (typeof edited !== "object" || edited === null || Array.isArray(edited)) return null;
  return canonicalJson(edited) === canonicalJson(asked)
    ? null
    : (edited as Record<string, unknown>);
}

/**
 * LangGraph's ids for the action requests: the interrupted calls are the last AI message's tool
 * calls (in order, those the middleware kept), so each request takes the next unused call of the
 * same name and args. Unmatched requests get undefined.
 */
export function toolCallIdsFor(
  messages: readonly unknown[],
  actions: readonly ActionRequest[],
): (string | undefined)[] {
  const toolCalls = lastToolCalls(messages);
  const taken = new Set<number>();
  return actions.map((action) => {
    const wanted = canonicalJson(action.args);
    const index = toolCalls.findIndex(
      (call, i) =>
        !taken.has(i) && call.name === action.name && canonicalJson(call.args) === wanted,
    );
    if (index === -1) return undefined;
    taken.add(index);
    return toolCalls[index]!.id;
  });
}

function lastToolCalls(messages: readonly unknown[]): ToolCall[] {
  // The middleware reviews the last AI message's calls: the same search it makes.
  const last = messages.findLast((message) => AIMessage.isInstance(message));
  return (last as AIMessage | undefined)?.tool_calls ?? [];
}

/** JSON with object keys sorted: equal for equal values, whatever order keys were written in. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
