import { CountersignError } from "../errors.js";

// The checkpoint the OpenAI Agents adapter stores with a pause: the Agents SDK's serialized
// RunState, kept as JSON (not as a string inside JSON, whose escaping grows it by a tenth or
// more), in an envelope that says what it is, so a resumer refuses a checkpoint it cannot read
// instead of feeding a stranger's data to RunState.fromString.

export const CHECKPOINT_FORMAT = "openai-agents/run-state";

/** The server's default body limit is 4 MiB; the calls and the envelope need some of it. */
export const DEFAULT_MAX_CHECKPOINT_BYTES = 4 * 1024 * 1024 - 256 * 1024;

export type AgentsCheckpoint = {
  format: typeof CHECKPOINT_FORMAT;
  version: 1;
  /** the toolCallIds of the paused calls, to check the claimed batch is this pause's */
  toolCallIds: string[];
  /** `JSON.parse(state.toString())` */
  state: Record<string, unknown>;
};

export function toCheckpoint(
  state: { toString(): string },
  toolCallIds: string[],
  maxBytes: number,
): AgentsCheckpoint {
  const serialized = state.toString();
  const bytes = new TextEncoder().encode(serialized).length;
  if (bytes > maxBytes) {
    // Fail before creating anything: a 413 after the run was created would leave it paused on nothing.
    throw new CountersignError({
      status: 0,
      code: "payload_too_large",
      message: `The serialized run state is ${bytes} bytes, over the ${maxBytes} allowed for a checkpoint (the server's body limit, MAX_BODY_BYTES, is 4 MiB by default). Long histories and large tool outputs make it grow: trim them (a session, callModelInputFilter) or raise both limits.`,
    });
  }
  return {
    format: CHECKPOINT_FORMAT,
    version: 1,
    toolCallIds,
    state: JSON.parse(serialized) as Record<string, unknown>,
  };
}

/** The claimed checkpoint as ours, or an error naming what is wrong with it. */
export function readCheckpoint(value: unknown, runId: string): AgentsCheckpoint {
  const checkpoint = value as Partial<AgentsCheckpoint> | null;
  if (
    !checkpoint ||
    checkpoint.format !== CHECKPOINT_FORMAT ||
    checkpoint.version !== 1 ||
    typeof checkpoint.state !== "object" ||
    checkpoint.state === null
  ) {
    throw new Error(
      `Run ${runId} has no OpenAI Agents checkpoint (was it paused with pauseOnInterruptions?).`,
    );
  }
  return checkpoint as AgentsCheckpoint;
}

/**
 * The serialized state with the model's calls `edits` (callId → args) carrying the reviewer's
 * arguments instead. The Agents SDK approves a call only as the model made it (openai-agents-js
 * #1097 declined an `approve(item, { newArguments })`), so the adapter changes the call before the
 * state is restored: the tool then runs with exactly the approved arguments, and the model's
 * history shows the call that ran. Every copy of the call (model response, generated items, the
 * pending interruption) is changed alike; the caller checks the restored interruptions.
 */
export function withEditedArguments(
  state: Record<string, unknown>,
  edits: Map<string, Record<string, unknown>>,
): Record<string, unknown> {
  if (edits.size === 0) return state;
  const edit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(edit);
    if (typeof value !== "object" || value === null) return value;
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) copy[key] = edit(field);
    const args = copy.type === "function_call" && edits.get(String(copy.callId));
    if (args && typeof copy.arguments === "string") copy.arguments = JSON.stringify(args);
    return copy;
  };
  return edit(state) as Record<string, unknown>;
}

/** `a` and `b` are the same JSON value, whatever the order of their keys. */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value)
      .filter(([, field]) => field !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, field]) => `${JSON.stringify(key)}:${canonical(field)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
