import { ToolMessage } from "@langchain/core/messages";
import { Command, INTERRUPT, type Interrupt } from "@langchain/langgraph";
import type { ActionRequest, Decision as HitlDecision, HITLRequest, HITLResponse } from "langchain";
import type { Countersign } from "../client.js";
import { CountersignError } from "../errors.js";
import { newIdempotencyKey } from "../http.js";
import type { RunSession } from "../run-session.js";
import type { Batch, CreateRunInput, TimeoutAction } from "../types.js";
import type { WaitOptions } from "../wait-for-decision.js";
import {
  callInput,
  clip,
  decisionsFrom,
  pendingActions,
  toolCallIdsFor,
  type CallDetails,
  type PendingAction,
} from "./langgraph-decisions.js";

// LangChain's humanInTheLoopMiddleware pauses an agent with an interrupt listing the tool calls
// it wants reviewed. Here those become one Countersign batch, and the reviewers' decisions come
// back as the middleware's resume decisions: approve, edit (the reviewer's args), or reject (with
// the reason, for the model). `invokeWithApproval` runs the whole invoke → decide → resume loop.

export { DecisionNotAllowedError, decisionsFrom, toolCallIdsFor } from "./langgraph-decisions.js";
export type { CallDetails, PendingAction } from "./langgraph-decisions.js";

export type AskOptions = {
  /** a queue id or name the agent key may target; its default queue otherwise */
  queue?: string;
  /** the server-side deadline of the decision */
  timeoutSecs?: number;
  /** what the deadline does (default reject: fail closed) */
  onTimeout?: TimeoutAction;
  /**
   * JSON Schemas of tools' args by tool name, to validate reviewers' edits. An interruptOn
   * config's own `argsSchema` wins.
   */
  inputSchemas?: Record<string, Record<string, unknown>>;
  /** card fields per action (the summary defaults to the middleware's description) */
  describe?: (action: ActionRequest) => CallDetails | undefined;
  /** stored with the batch and handed to whoever claims the run after the decision */
  checkpoint?: unknown;
  /** how to wait: `timeoutMs` withdraws the request and answers rejections; `signal` aborts */
  wait?: Omit<WaitOptions, "runId">;
};

export type RequestDecisionsOptions = AskOptions & {
  /** the Countersign run the request belongs to: a RunSession, or a run id */
  run: RunSession | string;
  /** the interrupted state's `messages`: links each call to LangGraph's tool call id */
  messages?: readonly unknown[];
  /** or those ids yourself, one per action request; ids not found are made up */
  toolCallIds?: readonly (string | undefined)[];
};

/**
 * Asks Countersign about one human-in-the-loop interrupt (`state.__interrupt__[0]`, or its
 * `value`) and answers what to resume the graph with: `new Command({ resume })`.
 * Throws DecisionNotAllowedError when a decision cannot be given under the action's
 * `allowedDecisions` (a rejection where `reject` is not allowed).
 */
export async function requestDecisions(
  client: Countersign,
  interrupt: Interrupt | HITLRequest,
  options: RequestDecisionsOptions,
): Promise<HITLResponse> {
  const session = typeof options.run === "string" ? client.session(options.run) : options.run;
  const request = hitlRequestOf(interrupt) ?? throwNotHitl(interrupt);
  const toolCallIds =
    options.toolCallIds ?? toolCallIdsFor(options.messages ?? [], request.actionRequests);
  const asked = await ask(session, [request], toolCallIds, options);
  return asked.responses[0]!;
}

export type InvokeWithApprovalOptions = AskOptions & {
  client: Countersign;
  /** LangGraph's config for every invoke: `configurable.thread_id` names the checkpointed thread */
  config: { configurable?: Record<string, unknown> } & Record<string, unknown>;
  /**
   * The run to ask in. Omitted: a run of its own, started at the first interrupt (with the thread
   * id as its conversationId), completed when the agent finishes and failed if it throws.
   */
  run?: RunSession | string;
  /** for the run it starts itself */
  newRun?: Omit<CreateRunInput, "batch">;
  /** each pause, before waiting (to say what the agent waits for) */
  onPause?: (actions: ActionRequest[]) => void;
  /** each decision, before the graph resumes with it */
  onDecision?: (batch: Batch | null, decisions: HitlDecision[]) => void;
  /** reporting a tool's outcome to Countersign failed (default: console.warn); the agent goes on */
  onReportError?: (error: unknown) => void;
};

/** Anything with LangGraph's `invoke` (createAgent's agent, a compiled graph). */
export type Invokable<State> = { invoke(input: never, config?: never): Promise<State> };

export type InvokeWithApprovalResult<State> = {
  /** the graph's final state (the last invoke's answer) */
  state: State;
  /** the Countersign run, or null if the agent never paused */
  runId: string | null;
  /** every batch asked, settled (null where a request was withdrawn unanswered) */
  batches: (Batch | null)[];
};

/**
 * Invokes the agent and, while it stops on human-in-the-loop interrupts, asks Countersign and
 * resumes it with the decisions. The tools LangGraph then runs are reported as `tool.completed` /
 * `tool.failed` on the run. Resolves with the final state once the agent finishes.
 */
export async function invokeWithApproval<State>(
  agent: Invokable<State>,
  input: unknown,
  options: InvokeWithApprovalOptions,
): Promise<InvokeWithApprovalResult<State>> {
  const { client, config } = options;
  const invoke = (value: unknown) => agent.invoke(value as never, config as never);
  const threadId = config.configurable?.thread_id;
  const given = options.run ?? null;
  let session: RunSession | null = typeof given === "string" ? client.session(given) : given;
  const owned = given === null;
  const batches: (Batch | null)[] = [];
  const report = (promise: Promise<unknown>) =>
    promise.catch(
      options.onReportError ??
        ((error: unknown) =>
          console.warn("Countersign: could not report a tool's outcome:", error)),
    );

  try {
    let state = await invoke(input);
    for (;;) {
      const interrupts = interruptsOf(state);
      if (interrupts.length === 0) break;
      const requests = interrupts.map(
        (interrupt) => hitlRequestOf(interrupt) ?? throwNotHitl(interrupt),
      );
      if (interrupts.length > 1 && interrupts.some((interrupt) => !interrupt.id))
        throw new Error("Countersign: several interrupts without ids cannot be resumed apart.");
      session ??= await client.startRun({
        conversationId: typeof threadId === "string" ? threadId : undefined,
        ...options.newRun,
      });
      const actions = requests.flatMap((request) => request.actionRequests);
      options.onPause?.(actions);
      const asked = await ask(session, requests, toolCallIdsFor(messagesOf(state), actions), {
        ...options,
        checkpoint: options.checkpoint ?? {
          langgraph: { threadId, interruptIds: interrupts.map((interrupt) => interrupt.id) },
        },
      });
      batches.push(asked.batch);
      options.onDecision?.(asked.batch, asked.decisions);
      // One interrupt takes its answer as is; several are answered by interrupt id.
      const resume =
        interrupts.length === 1
          ? asked.responses[0]
          : Object.fromEntries(
              interrupts.map((interrupt, i) => [interrupt.id, asked.responses[i]]),
            );
      state = await invoke(new Command({ resume }));
      await reportOutcomes(session, asked.pending, asked.decisions, messagesOf(state), report);
    }
    if (owned && session) await report(session.complete());
    return { state, runId: session?.runId ?? null, batches };
  } catch (error) {
    if (owned && session && !session.finished) await session.fail(error).catch(() => {});
    throw error;
  }
}

type Asked = {
  batch: Batch | null;
  pending: PendingAction[];
  decisions: HitlDecision[];
  /** one per request, in order */
  responses: HITLResponse[];
};

/** One batch for all the requests' actions; the decisions split back per request. */
async function ask(
  session: RunSession,
  requests: HITLRequest[],
  toolCallIds: readonly (string | undefined)[],
  options: AskOptions,
): Promise<Asked> {
  const pending = pendingActions(
    requests,
    toolCallIds,
    (name) => `${name.slice(0, 100)}-${newIdempotencyKey().slice(0, 12)}`,
  );
  const calls = pending.map((item) =>
    callInput(item, options.inputSchemas?.[item.action.name], options.describe?.(item.action)),
  );
  let batch: Batch | null;
  let waitedOut = false;
  try {
    batch = await session.exclusive(() =>
      session.ask(
        {
          calls,
          queue: options.queue,
          timeoutSecs: options.timeoutSecs,
          onTimeout: options.onTimeout,
          checkpoint: options.checkpoint,
        },
        options.wait,
      ),
    );
  } catch (error) {
    // Given up waiting: the request was withdrawn, so nothing was approved.
    if (!CountersignError.is(error, "wait_timeout")) throw error;
    batch = (error.current as Batch | null) ?? null;
    waitedOut = true;
  }
  const decisions = decisionsFrom(batch, pending, { waitedOut });
  const responses: HITLResponse[] = [];
  let next = 0;
  for (const request of requests) {
    responses.push({ decisions: decisions.slice(next, next + request.actionRequests.length) });
    next += request.actionRequests.length;
  }
  return { batch, pending, decisions, responses };
}

const MAX_REPORTED_CHARS = 8000;

/**
 * What LangGraph did with the approved calls, as the run's events: a ToolMessage for the call
 * means it ran. When a step had a rejection the middleware runs none of that step's calls, so an
 * approved call without a ToolMessage is reported as not run.
 */
async function reportOutcomes(
  session: RunSession,
  pending: PendingAction[],
  decisions: HitlDecision[],
  messages: unknown[],
  report: (promise: Promise<unknown>) => Promise<unknown>,
): Promise<void> {
  const anyRejected = decisions.some((decision) => decision.type === "reject");
  for (const [i, item] of pending.entries()) {
    if (decisions[i]!.type === "reject") continue;
    const message = messages.find(
      (m): m is ToolMessage => ToolMessage.isInstance(m) && m.tool_call_id === item.toolCallId,
    );
    const text = message ? clip(message.text, MAX_REPORTED_CHARS) : null;
    if (message && message.status === "error")
      await report(
        session.reportToolFailure(item.toolCallId, { name: "ToolError", message: text }),
      );
    else if (message) await report(session.reportToolResult(item.toolCallId, text));
    else if (anyRejected)
      await report(
        session.reportToolFailure(item.toolCallId, {
          name: "NotRun",
          message:
            "Approved, but not run: LangGraph runs none of a step's tool calls when one of them is rejected.",
        }),
      );
  }
}

function interruptsOf(state: unknown): Interrupt[] {
  const interrupts = (state as Record<string, unknown> | null)?.[INTERRUPT];
  return Array.isArray(interrupts) ? (interrupts as Interrupt[]) : [];
}

function messagesOf(state: unknown): unknown[] {
  const messages = (state as { messages?: unknown } | null)?.messages;
  return Array.isArray(messages) ? messages : [];
}

/** The middleware's request in an interrupt (or the request itself); null for other interrupts. */
function hitlRequestOf(interrupt: Interrupt | HITLRequest): HITLRequest | null {
  const value: unknown = "actionRequests" in interrupt ? interrupt : interrupt.value;
  const request = value as Partial<HITLRequest> | null | undefined;
  return request && Array.isArray(request.actionRequests) ? (request as HITLRequest) : null;
}

function throwNotHitl(interrupt: unknown): never {
  throw new Error(
    `Countersign: the graph stopped on an interrupt that is not a human-in-the-loop request (no actionRequests): ${clip(JSON.stringify(interrupt) ?? String(interrupt), 300)}. Answer it yourself, or ask only through humanInTheLoopMiddleware.`,
  );
}
