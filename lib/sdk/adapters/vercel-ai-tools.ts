import {
  asSchema,
  isDeepEqualData,
  type JSONValue,
  type ModelMessage,
  type Tool,
  type ToolResultPart,
} from "ai";
import type { RunSession } from "../run-session.js";
import type { Call } from "../types.js";
import { asJson, isObject, type PendingApproval } from "./vercel-ai-parts.js";

// What the adapter does with the agent's AI SDK tools: puts their input schemas on the cards (so
// reviewers' edits are checked), and runs a call a reviewer approved with an edited input.
//
// An AI SDK approval cannot change a call's input: the SDK re-checks that the approved input is
// the one the model produced, and its docs send user-corrected input through a tool result the
// app provides. So an edited call is run here, with the tool's own `execute`, and answered with
// that `tool-result`; the SDK then leaves the call alone, and the model reads which input ran.

/** The tool's input schema as JSON Schema, for reviewers' edits (none when it cannot say). */
export async function jsonSchemaOf(
  tool: Tool | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (!tool?.inputSchema) return undefined;
  try {
    const schema: unknown = await asSchema(tool.inputSchema).jsonSchema;
    if (!isObject(schema)) return undefined;
    // The server's validator speaks draft-07 by default; a `$schema` naming another draft would
    // make it refuse the whole batch.
    const { $schema, ...rest } = schema;
    return $schema === "http://json-schema.org/draft-07/schema#" ? schema : rest;
  } catch {
    return undefined;
  }
}

/** The reviewer's edited input, when it differs from the model's. */
export function editedInput(request: PendingApproval, call: Call): { input: unknown } | undefined {
  const edited = call.decision?.editedArgs;
  if (edited === null || edited === undefined) return undefined;
  // A non-object input went on the card as { input } (the API's args are objects).
  const input = isObject(request.input) ? edited : (edited as { input?: unknown }).input;
  return isDeepEqualData(input, request.input) ? undefined : { input };
}

export type CheckedInput = { value: unknown } | { problem: string };

/** The edited input as the tool's schema parses it (what the SDK would hand `execute`), or why not. */
export async function checkEditedInput(
  request: PendingApproval,
  tool: Tool | undefined,
  input: unknown,
): Promise<CheckedInput> {
  if (request.providerExecuted) return { problem: "the provider runs this tool" };
  if (!tool?.execute) return { problem: "the agent was not given the tool to run it with" };
  const validate = tool.inputSchema ? asSchema(tool.inputSchema).validate : undefined;
  if (!validate) return { value: input };
  const checked = await validate(input);
  return checked.success
    ? { value: checked.value }
    : { problem: `the tool's schema refuses it (${checked.error.message})` };
}

export type RunEditedOptions = {
  session: RunSession;
  /** the conversation, handed to `execute` as the SDK would */
  messages: ModelMessage[];
  abortSignal?: AbortSignal;
  experimental_context?: unknown;
  onReportError: (error: unknown) => void;
};

/** Runs the tool with the reviewer's input, reports the outcome, and gives the model's tool result. */
export async function runEdited(
  tool: Tool,
  request: PendingApproval,
  input: unknown,
  options: RunEditedOptions,
): Promise<ToolResultPart> {
  const { toolCallId, toolName } = request;
  const execute = tool.execute as (input: unknown, options: unknown) => unknown;
  let output: ToolResultPart["output"];
  try {
    let result = await execute(input, {
      toolCallId,
      messages: options.messages,
      abortSignal: options.abortSignal,
      experimental_context: options.experimental_context,
    });
    // A streaming tool's last value is its result, as the AI SDK takes it.
    if (isAsyncIterable(result)) for await (const value of result) result = value;
    await options.session.reportToolResult(toolCallId, asJson(result)).catch(options.onReportError);
    output = tool.toModelOutput
      ? await tool.toModelOutput({ toolCallId, input, output: result })
      : {
          type: "json",
          value: {
            note: "A reviewer changed the input of this call before approving it; the tool ran with `input`.",
            input: asJson(input) ?? null,
            output: asJson(result) ?? null,
          } as JSONValue,
        };
  } catch (error) {
    await options.session.reportToolFailure(toolCallId, error).catch(options.onReportError);
    // As the SDK words a failed tool for the model.
    output = {
      type: "error-text",
      value: error instanceof Error ? error.message : JSON.stringify(error),
    };
  }
  return { type: "tool-result", toolCallId, toolName, output };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof value === "object" && value !== null && Symbol.asyncIterator in value;
}
