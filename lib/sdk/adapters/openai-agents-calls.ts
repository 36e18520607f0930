import type { RunToolApprovalItem } from "@openai/agents";

// How one Agents SDK interruption reads as a Countersign call, and how a Countersign decision
// reads to the model when the call is not run.

/** An interruption as the adapter hands it to `summary`, `risks` and `costEstimate`. */
export type InterruptedCall = {
  /** the model's call id (`callId` of the function call): the Countersign `toolCallId` */
  toolCallId: string;
  toolName: string;
  /** the parsed arguments (`{ input }` when the model sent something other than a JSON object) */
  args: Record<string, unknown>;
  /** the agent whose tool it is (handoffs and nested agents included) */
  agentName: string;
  /** only function calls can be run with a reviewer's edited arguments */
  editable: boolean;
  item: RunToolApprovalItem;
};

type RawCall = Record<string, unknown> & { type?: string };

/** Fields of hosted, shell, computer and patch calls that are bookkeeping, not arguments. */
const NOT_ARGS = new Set(["type", "id", "callId", "status", "providerData", "name", "namespace"]);

export function interruptedCall(item: RunToolApprovalItem): InterruptedCall {
  const raw = item.rawItem as RawCall;
  const toolCallId = String(raw.callId ?? raw.id ?? "");
  if (!toolCallId) throw new Error(`An interruption of ${item.name ?? raw.type} has no call id.`);
  const toolName = item.name ?? String(raw.type ?? "tool");
  let args: Record<string, unknown>;
  if (typeof item.arguments === "string") {
    args = asObject(parseJson(item.arguments));
  } else {
    args = Object.fromEntries(Object.entries(raw).filter(([key]) => !NOT_ARGS.has(key)));
  }
  return {
    toolCallId,
    toolName,
    args,
    agentName: item.agent.name,
    editable: raw.type === "function_call",
    item,
  };
}

/**
 * The JSON Schema of a function tool's parameters, so reviewers' edits are validated against
 * it. `$schema` is dropped: the server's validator knows draft-07 only, and refuses a batch whose
 * schema names another draft.
 */
export function inputSchemaOf(call: InterruptedCall): Record<string, unknown> | undefined {
  if (!call.editable) return undefined;
  const tool = call.item.agent.tools.find(
    (t) => t.type === "function" && t.name === call.toolName,
  ) as { parameters?: unknown } | undefined;
  const schema = tool?.parameters;
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return undefined;
  const { $schema, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/** Said to the model when an edit could not be applied to the restored state (fail closed). */
export function editNotAppliedMessage(editedArgs: Record<string, unknown>): string {
  return `A reviewer approved this call only with other arguments: ${JSON.stringify(editedArgs)}. The tool was not run; call it again with exactly these arguments if they still suit the task.`;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { input: value };
}
