import type {
  ModelMessage,
  ToolApprovalResponse,
  ToolModelMessage,
  ToolResultPart,
  ToolSet,
} from "ai";
import type { Countersign } from "../client.js";
import { CountersignError } from "../errors.js";
import type { RunSession } from "../run-session.js";
import type {
  Batch,
  Call,
  CallInput,
  CreateRunInput,
  DecisionSource,
  Ref,
  TimeoutAction,
} from "../types.js";
import type { WaitOptions } from "../wait-for-decision.js";
import {
  approvalReason,
  asJson,
  denialReason,
  isObject,
  pendingInMessages,
  pendingInResult,
  reportable,
  toolResultsIn,
  type PendingApproval,
  type ResultLike,
} from "./vercel-ai-parts.js";
import { checkEditedInput, editedInput, jsonSchemaOf, runEdited } from "./vercel-ai-tools.js";

// The Vercel AI SDK (`ai` v6) asks for approval by ending generateText / streamText with
// `tool-approval-request` parts (tools with `needsApproval`) and resumes when the next call's
// messages end with `tool-approval-response` parts. requestApprovals turns the pending requests of
// one step into one Countersign batch, waits for the people deciding it, and answers with the
// tool message to append. One Countersign run spans the whole conversation: pass the same `run`
// (a RunSession) every time; after each decision the session holds the run's claim, so the next
// pause, the tool results and the completion are the same worker's.
//
// Edits: an AI SDK approval cannot change a call's input, so a call a reviewer approved with
// edited args is run by the adapter itself and answered with its tool result (vercel-ai-tools.ts).

export type { PendingApproval, ResultLike };

export type RequestApprovalsOptions = {
  /** a generateText / streamText / ToolLoopAgent result: the approval requests of its last step */
  result?: ResultLike;
  /**
   * or the conversation so far: the approval requests nobody answered yet. Given with `result`,
   * it is only handed to `execute` when an edited call runs here.
   */
  messages?: ModelMessage[];
  /** the tools given to the model: their JSON Schemas go on the cards, and edited calls run here */
  tools?: ToolSet;
  /** the conversation's run: a RunSession or a run id; omitted, a run is started (`answer.run`) */
  run?: RunSession | string | null;
  /** for the run started when `run` is omitted */
  newRun?: Omit<CreateRunInput, "batch">;
  /** a queue id or name the agent key may target */
  queue?: string;
  /** the server-side deadline of the decision */
  timeoutSecs?: number;
  /** what the deadline does (default reject: fail closed) */
  onTimeout?: TimeoutAction;
  summary?: (request: PendingApproval) => string | undefined;
  risks?: (request: PendingApproval) => string[] | undefined;
  costEstimate?: (request: PendingApproval) => number | undefined;
  metadata?: (request: PendingApproval) => Record<string, unknown> | undefined;
  /** called once the batch waits for people, e.g. to show `batch.reviewUrl` */
  onPending?: (batch: Batch) => void;
  /** `signal` aborts (the batch is withdrawn and this rejects); `timeoutMs` gives up (withdrawn, every call denied) */
  wait?: Omit<WaitOptions, "runId">;
  /** handed to `execute` when an edited call runs here */
  experimental_context?: unknown;
  /** reporting a tool's outcome to Countersign failed (default: console.warn) */
  onReportError?: (error: unknown) => void;
};

export type ApprovalDecision = PendingApproval & {
  /** the tool runs (or, edited, ran here) */
  approved: boolean;
  /** the input a reviewer approved instead of the model's, when they edited it */
  editedInput?: unknown;
  /** the reviewer's or the policy's own words, if any */
  reason: string | null;
  decidedBy: Ref | null;
  source: DecisionSource | "cancelled";
  call: Call | null;
};

export type ApprovalAnswer = {
  /** the run the batch belongs to (null when nothing was pending and no run was given) */
  run: RunSession | null;
  /** the settled batch, or null when nothing was pending */
  batch: Batch | null;
  decisions: ApprovalDecision[];
  responses: ToolApprovalResponse[];
  /** results of edited calls, run here with the reviewer's input */
  toolResults: ToolResultPart[];
  /** append these to the messages of the next generateText / streamText call ([] when nothing was pending) */
  messages: ToolModelMessage[];
};

/** Per session: approved calls the AI SDK runs next, whose results are still to report. */
const awaitingResults = new WeakMap<RunSession, Set<string>>();

/**
 * Asks Countersign about the pending tool approval requests of `result` (or `messages`) as one
 * batch and answers with the `tool-approval-response` parts of the decisions. Tool results of
 * earlier approved calls found there are reported to the run first.
 */
export async function requestApprovals(
  client: Countersign,
  options: RequestApprovalsOptions,
): Promise<ApprovalAnswer> {
  const source = options.result ?? options.messages;
  if (!source) throw new TypeError("requestApprovals needs `result` or `messages`.");
  const pending = options.result
    ? await pendingInResult(options.result)
    : pendingInMessages(options.messages!);
  const given =
    typeof options.run === "string" ? client.session(options.run) : (options.run ?? null);
  if (pending.length === 0) {
    if (given) await reportToolResults(given, source, options);
    return { run: given, batch: null, decisions: [], responses: [], toolResults: [], messages: [] };
  }

  const calls = await Promise.all(pending.map((request) => callInput(request, options)));
  const session = given ?? (await client.startRun(options.newRun ?? {}));
  const asked = ask(client, session, pending, calls, source, options);
  // A run started here that never reached the caller would be left running: end it.
  if (!given) asked.catch((error: unknown) => session.fail(error).catch(() => {}));
  return asked;
}

function ask(
  client: Countersign,
  session: RunSession,
  pending: PendingApproval[],
  calls: CallInput[],
  source: ResultLike | ModelMessage[],
  options: RequestApprovalsOptions,
): Promise<ApprovalAnswer> {
  return session.exclusive(async () => {
    await reportFrom(session, source, options);
    const paused = await session.pause(
      {
        calls,
        queue: options.queue,
        timeoutSecs: options.timeoutSecs,
        onTimeout: options.onTimeout,
      },
      { signal: options.wait?.signal },
    );
    let batch = paused;
    let waitedOut = false;
    if (paused.status === "pending") {
      options.onPending?.(paused);
      ({ batch, waitedOut } = await settle(client, session, paused, options.wait));
    }
    // A withdrawn batch hands the run back by itself; a decided one is claimed for what follows.
    if (batch.status !== "cancelled") await session.takeBack(options.wait?.signal);

    const answer: ApprovalAnswer = {
      run: session,
      batch,
      decisions: [],
      responses: [],
      toolResults: [],
      messages: [],
    };
    const awaiting = awaitingResults.get(session) ?? new Set<string>();
    awaitingResults.set(session, awaiting);
    for (const request of pending) {
      const call = batch.calls.find((c) => c.toolCallId === request.toolCallId) ?? null;
      const decided = await answerFor(request, call, batch, waitedOut, session, options);
      answer.decisions.push(decided.decision);
      answer.responses.push(decided.response);
      if (decided.toolResult) answer.toolResults.push(decided.toolResult);
      else if (decided.decision.approved) awaiting.add(request.toolCallId);
    }
    answer.messages = [{ role: "tool", content: [...answer.responses, ...answer.toolResults] }];
    return answer;
  });
}

/**
 * Reports to Countersign the results (`tool.completed` / `tool.failed`) that the AI SDK produced
 * for calls requestApprovals approved on this run, found in a result or in messages; each once.
 * requestApprovals does this by itself; call it after the last step, before `run.complete()`.
 */
export function reportToolResults(
  run: RunSession,
  from: ResultLike | ModelMessage[],
  options: Pick<RequestApprovalsOptions, "onReportError"> = {},
): Promise<number> {
  return run.exclusive(() => reportFrom(run, from, options));
}

async function reportFrom(
  run: RunSession,
  from: ResultLike | ModelMessage[],
  options: Pick<RequestApprovalsOptions, "onReportError">,
): Promise<number> {
  const awaiting = awaitingResults.get(run);
  if (!awaiting?.size) return 0;
  const messages = Array.isArray(from) ? from : ((await from.response)?.messages ?? []);
  let reported = 0;
  for (const part of toolResultsIn(messages)) {
    if (!awaiting.delete(part.toolCallId)) continue;
    const outcome = reportable(part.output);
    if (!outcome) continue;
    const report = outcome.failed
      ? run.reportToolFailure(part.toolCallId, outcome.value)
      : run.reportToolResult(part.toolCallId, asJson(outcome.value));
    await report.then(() => reported++, reportError(options, part.toolName));
  }
  return reported;
}

type Answered = {
  decision: ApprovalDecision;
  response: ToolApprovalResponse;
  toolResult?: ToolResultPart;
};

async function answerFor(
  request: PendingApproval,
  call: Call | null,
  batch: Batch,
  waitedOut: boolean,
  session: RunSession,
  options: RequestApprovalsOptions,
): Promise<Answered> {
  const decision: ApprovalDecision = {
    ...request,
    approved: call?.status === "approved",
    reason: call?.decision ? call.decision.reason : batch.cancelReason,
    decidedBy: call?.decision?.by ?? null,
    source: call?.decision?.source ?? "cancelled",
    call,
  };
  const respond = (approved: boolean, reason: string): ToolApprovalResponse => ({
    type: "tool-approval-response",
    approvalId: request.approvalId,
    approved,
    reason,
    ...(request.providerExecuted && { providerExecuted: true }),
  });
  if (!call || !decision.approved)
    return { decision, response: respond(false, denialReason(call, batch, waitedOut)) };

  const edited = editedInput(request, call);
  if (edited === undefined) return { decision, response: respond(true, approvalReason(call)) };
  decision.editedInput = edited.input;

  const tool = options.tools?.[request.toolName];
  const checked = await checkEditedInput(request, tool, edited.input);
  if ("problem" in checked) {
    // Fail closed: running the model's input would ignore the reviewer.
    decision.approved = false;
    const reason = `A reviewer approved this call only with a changed input, ${JSON.stringify(edited.input)}, but ${checked.problem}. The tool was not run; call it again with that input if it still makes sense.`;
    return { decision, response: respond(false, reason) };
  }
  const toolResult = await runEdited(tool!, request, checked.value, {
    session,
    messages: options.messages ?? [],
    abortSignal: options.wait?.signal,
    experimental_context: options.experimental_context,
    onReportError: reportError(options, request.toolName),
  });
  return {
    decision,
    response: respond(true, `${approvalReason(call)} (with an edited input, run by the agent)`),
    toolResult,
  };
}

/** Waits for the decision; giving up (`timeoutMs`) or aborting withdraws the batch first. */
async function settle(
  client: Countersign,
  session: RunSession,
  paused: Batch,
  wait: RequestApprovalsOptions["wait"] = {},
): Promise<{ batch: Batch; waitedOut: boolean }> {
  try {
    const batch = await client.waitForDecision(paused.id, { ...wait, runId: session.runId });
    return { batch, waitedOut: false };
  } catch (error) {
    const timedOut = CountersignError.is(error, "wait_timeout");
    if (!timedOut && !wait.signal?.aborted) throw error;
    const withdrawn = await client
      .cancelBatch(paused.id, { reason: "The agent stopped waiting for a decision." })
      .catch((refused: unknown) =>
        CountersignError.is(refused, "not_pending") ? (refused.current as Batch) : null,
      );
    if (!timedOut || !withdrawn) throw error;
    // A decision that came in first stands.
    return { batch: withdrawn, waitedOut: withdrawn.status === "cancelled" };
  }
}

async function callInput(
  request: PendingApproval,
  options: RequestApprovalsOptions,
): Promise<CallInput> {
  const input = request.input;
  return {
    toolCallId: request.toolCallId,
    toolName: request.toolName,
    // The API takes args as an object; a tool whose input is not one is shown as { input }.
    args: isObject(input) ? input : { input },
    inputSchema: isObject(input)
      ? await jsonSchemaOf(options.tools?.[request.toolName])
      : undefined,
    summary: options.summary?.(request),
    risks: options.risks?.(request),
    costEstimate: options.costEstimate?.(request),
    metadata: { ...options.metadata?.(request), aiSdk: { approvalId: request.approvalId } },
  };
}

function reportError(options: RequestApprovalsOptions, toolName: string) {
  return (
    options.onReportError ??
    ((error: unknown) => console.warn(`Countersign: could not report on ${toolName}:`, error))
  );
}
