import {
  RunContext,
  Runner,
  RunState,
  type Agent,
  type NonStreamRunOptions,
  type RunResult,
  type RunToolApprovalItem,
} from "@openai/agents";
import { callRejectionMessage } from "../rejection.js";
import { Claim } from "../claim.js";
import type { Countersign } from "../client.js";
import { CountersignError } from "../errors.js";
import { RunSession } from "../run-session.js";
import type { Batch, BatchInput, CallInput, CreateRunInput, Run, TimeoutAction } from "../types.js";
import type { WaitOptions } from "../wait-for-decision.js";
import {
  editNotAppliedMessage,
  inputSchemaOf,
  interruptedCall,
  type InterruptedCall,
} from "./openai-agents-calls.js";
import {
  DEFAULT_MAX_CHECKPOINT_BYTES,
  readCheckpoint,
  sameJson,
  toCheckpoint,
  withEditedArguments,
} from "./openai-agents-checkpoint.js";

// Countersign for the OpenAI Agents SDK (`@openai/agents`). A run that stops on tools with
// `needsApproval` becomes one Countersign batch whose checkpoint is the serialized RunState; any
// process that has the run id and the agent definition can later claim the run, apply the
// reviewers' decisions to the restored state and continue it. Nothing waits in memory meanwhile.

export type { InterruptedCall } from "./openai-agents-calls.js";
export { CHECKPOINT_FORMAT, type AgentsCheckpoint } from "./openai-agents-checkpoint.js";

// The Agents SDK's own bound for "an agent of any context and output" (RunState, Runner.run).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyAgent = Agent<any, any>;

export type PauseOptions = {
  /**
   * The Countersign run to pause: a RunSession, a Claim (a resumer pausing again), or a run id.
   * Omitted: a new run is created with this pause in the same request.
   */
  run?: RunSession | Claim | string;
  /** for the run created when `run` is omitted */
  newRun?: Omit<CreateRunInput, "batch">;
  /** a queue id or name the agent key may target; its default queue otherwise */
  queue?: string;
  timeoutSecs?: number;
  /** what the deadline does (the server's default: reject) */
  onTimeout?: TimeoutAction;
  /** a webhook for the decision: the usual way to start the resumer */
  callbackUrl?: string;
  summary?: (call: InterruptedCall) => string | undefined;
  risks?: (call: InterruptedCall) => string[] | undefined;
  costEstimate?: (call: InterruptedCall) => number | undefined;
  /** refuse (before any request) a serialized state larger than this; default 3.75 MiB */
  maxCheckpointBytes?: number;
};

export type Paused = { runId: string; batch: Batch };

/** What `pauseOnInterruptions` needs of a RunResult. */
export type InterruptedResult = {
  interruptions: RunToolApprovalItem[];
  state: { toString(): string };
};

/**
 * When `result` stopped on tool approvals, asks for them in one Countersign batch (a call per
 * interruption: `toolCallId` the model's call id, `args` its parsed arguments, `inputSchema` the
 * tool's parameters) with the serialized run state as its checkpoint. Resolves with the run and
 * batch, or null when the run did not stop. The batch may come back already `decided` (policies,
 * remembered approvals): then the run is `ready` and can be resumed at once.
 */
export async function pauseOnInterruptions(
  client: Countersign,
  result: InterruptedResult,
  options: PauseOptions = {},
): Promise<Paused | null> {
  if (result.interruptions.length === 0) return null;
  const calls = result.interruptions.map(interruptedCall);
  const checkpoint = toCheckpoint(
    result.state,
    calls.map((call) => call.toolCallId),
    options.maxCheckpointBytes ?? DEFAULT_MAX_CHECKPOINT_BYTES,
  );
  const batch: BatchInput = {
    calls: calls.map((call) => callInput(call, options)),
    queue: options.queue,
    timeoutSecs: options.timeoutSecs,
    onTimeout: options.onTimeout,
    callbackUrl: options.callbackUrl,
    checkpoint,
  };

  const { run } = options;
  if (run instanceof Claim) return { runId: run.runId, batch: await run.pause(batch) };
  if (run !== undefined) {
    const session = run instanceof RunSession ? run : client.session(run);
    return { runId: session.runId, batch: await session.pause(batch) };
  }
  const created = await client.createRun({ ...options.newRun, batch });
  return { runId: created.id, batch: created.batches![0]! };
}

export type ResumeOptions<TContext = unknown, TAgent extends AnyAgent = AnyAgent> = {
  runId: string;
  /** names this process in the claim (and to a racing resumer, in `already_claimed`) */
  workerId: string;
  /** the claim's lease, kept alive by heartbeats while the agent runs (default 60 s) */
  leaseSecs?: number;
  /**
   * While the run still waits for a decision (`not_ready`), wait for it and then claim (`true`,
   * or WaitOptions). Default: throw `not_ready` at once.
   */
  wait?: boolean | Omit<WaitOptions, "runId">;
  /** replaces the run context's `context` object stored in the checkpoint (approvals are kept) */
  context?: TContext;
  /** the Runner to continue with (its config, model provider, hooks); default a new one */
  runner?: Runner;
  runOptions?: Omit<NonStreamRunOptions<TContext, TAgent>, "stream" | "signal" | "context">;
  /** how to ask again when the continued run stops on new approvals */
  pause?: Omit<PauseOptions, "run" | "newRun">;
  /** reporting a tool's result to Countersign failed (default: console.warn); the run goes on */
  onReportError?: (error: unknown) => void;
};

/** How one interruption was settled on the restored state. */
export type AppliedDecision = {
  toolCallId: string;
  toolName: string;
  /** `edited`: approved and run with the reviewer's arguments */
  outcome: "approved" | "edited" | "rejected";
  /** the arguments the tool ran with, or would have */
  args: Record<string, unknown>;
  /** for a rejection: what the model was told instead of the tool's output */
  message?: string;
};

export type Resumed<TContext, TAgent extends AnyAgent> = {
  runId: string;
  result: RunResult<TContext, TAgent>;
  decisions: AppliedDecision[];
} & (
  | { status: "completed"; run: Run }
  /** the continued run stopped on new approvals: a new batch waits, with a new checkpoint */
  | { status: "paused"; batch: Batch }
);

/**
 * Claims a decided run, restores its RunState from the checkpoint with `agent` (the same agent
 * definition as the paused run's starting agent), approves or rejects each interruption as the
 * reviewers decided, and continues the run. Approved calls run and their results are reported
 * (`tool.completed`); the Countersign run is then completed with `{ finalOutput }`, or paused again
 * when the agent stops on new approvals.
 *
 * Throws the claim's `already_claimed` / `not_ready` / `run_terminal` as CountersignErrors. When
 * restoring or running fails before any tool started (a checkpoint this agent definition cannot
 * restore, a model error), the error is thrown and the claim is left to lapse, so the run can be
 * resumed again; once a tool started, the Countersign run is failed instead, since resuming from
 * the checkpoint would run its tools again.
 */
export async function resumeFromDecision<TAgent extends AnyAgent, TContext = unknown>(
  client: Countersign,
  agent: TAgent,
  options: ResumeOptions<TContext, TAgent>,
): Promise<Resumed<TContext, TAgent>> {
  const claim = await claimWhenDecided(client, options);
  const warn =
    options.onReportError ??
    ((error: unknown) =>
      console.warn(`Countersign: could not report on run ${claim.runId}:`, error));

  let restored: Awaited<ReturnType<typeof restore<TAgent, TContext>>>;
  try {
    restored = await restore(agent, claim, options.context);
  } catch (error) {
    claim.release();
    throw error;
  }
  const { state, decisions } = restored;

  // Report each approved call's result as soon as its tool ends, not after the whole run.
  const toReport = new Set(
    decisions.filter((d) => d.outcome !== "rejected").map((d) => d.toolCallId),
  );
  const reports: Promise<unknown>[] = [];
  let toolsStarted = 0;
  const onToolStart = () => void toolsStarted++;
  const onToolEnd = (
    _context: unknown,
    _agent: unknown,
    _tool: unknown,
    output: string,
    details: { toolCall: unknown },
  ) => {
    const callId = (details.toolCall as { callId?: string }).callId;
    if (!callId || !toReport.delete(callId)) return;
    reports.push(claim.reportToolResult(callId, parseOutput(output)).catch(warn));
  };
  const runner = options.runner ?? new Runner();
  runner.on("agent_tool_start", onToolStart);
  runner.on("agent_tool_end", onToolEnd);
  let result: RunResult<TContext, TAgent>;
  try {
    result = await runner.run(agent, state, { ...options.runOptions, signal: claim.signal });
  } catch (error) {
    await Promise.all(reports);
    // A lost claim aborted the run: say that, not "aborted".
    if (claim.state === "lost") throw await claim.lost;
    if (toolsStarted === 0) {
      // Nothing with side effects ran (a model error, a tool missing from the agent definition):
      // the checkpoint is still good, so the lease is left to lapse and the run can be retried.
      claim.release();
    } else {
      // Tools ran: resuming from the checkpoint would run them again.
      await claim.fail(error).catch(warn);
    }
    throw error;
  } finally {
    runner.off("agent_tool_start", onToolStart);
    runner.off("agent_tool_end", onToolEnd);
  }
  await Promise.all(reports);

  if (result.interruptions.length > 0) {
    const paused = await pauseOnInterruptions(client, result, { ...options.pause, run: claim });
    return { status: "paused", runId: claim.runId, result, decisions, batch: paused!.batch };
  }
  const run = await claim.complete({ finalOutput: asJson(result.finalOutput) });
  return { status: "completed", runId: claim.runId, result, decisions, run };
}

async function claimWhenDecided(
  client: Countersign,
  options: Pick<ResumeOptions, "runId" | "workerId" | "leaseSecs" | "wait">,
): Promise<Claim> {
  const claimOptions = { workerId: options.workerId, leaseSecs: options.leaseSecs };
  try {
    return await client.claim(options.runId, claimOptions);
  } catch (error) {
    if (!options.wait || !CountersignError.is(error, "not_ready")) throw error;
    const run = await client.getRun(options.runId);
    const pending = run.batches?.findLast((batch) => batch.status === "pending");
    if (!pending) throw error;
    const wait = options.wait === true ? {} : options.wait;
    await client.waitForDecision(pending.id, { ...wait, runId: options.runId });
    return client.claim(options.runId, claimOptions);
  }
}

/** The run state as the claim's checkpoint had it, with the batch's decisions applied. */
async function restore<TAgent extends AnyAgent, TContext>(
  agent: TAgent,
  claim: Claim,
  context: TContext | undefined,
): Promise<{ state: RunState<TContext, TAgent>; decisions: AppliedDecision[] }> {
  const checkpoint = readCheckpoint(claim.checkpoint, claim.runId);
  const batch = claim.batch;
  const calls = new Map((batch?.calls ?? []).map((call) => [call.toolCallId, call]));
  if (!checkpoint.toolCallIds.every((id) => calls.has(id))) {
    throw new Error(
      `Run ${claim.runId}'s latest batch is not the one its checkpoint was paused with.`,
    );
  }

  const edits = new Map<string, Record<string, unknown>>();
  for (const call of calls.values()) {
    const edited = call.decision?.editedArgs;
    if (call.status === "approved" && isObject(edited) && !sameJson(edited, call.args))
      edits.set(call.toolCallId, edited);
  }
  const serialized = JSON.stringify(withEditedArguments(checkpoint.state, edits));
  const state =
    context === undefined
      ? await RunState.fromString<TContext, TAgent>(agent, serialized)
      : await RunState.fromStringWithContext<TContext, TAgent>(
          agent,
          serialized,
          new RunContext(context),
        );

  const decisions = state.getInterruptions().map((item): AppliedDecision => {
    const interrupted = interruptedCall(item);
    const { toolCallId, toolName, args } = interrupted;
    const call = calls.get(toolCallId);
    const edited = edits.get(toolCallId);
    let message: string;
    if (call?.status === "approved") {
      if (!edited) {
        state.approve(item);
        return { toolCallId, toolName, outcome: "approved", args };
      }
      // Run the reviewer's arguments or nothing: an edit the restored state does not show
      // (a tool that is not a function, a future SDK's format) is refused, never run as asked.
      if (sameJson(args, edited)) {
        state.approve(item);
        return { toolCallId, toolName, outcome: "edited", args };
      }
      message = editNotAppliedMessage(edited);
    } else {
      message = callRejectionMessage(call, batch);
    }
    state.reject(item, { message });
    return { toolCallId, toolName, outcome: "rejected", args: edited ?? args, message };
  });
  return { state, decisions };
}

function callInput(call: InterruptedCall, options: PauseOptions): CallInput {
  return {
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    args: call.args,
    inputSchema: inputSchemaOf(call),
    summary: options.summary?.(call),
    risks: options.risks?.(call),
    costEstimate: options.costEstimate?.(call),
    metadata: { framework: "openai-agents", agent: call.agentName },
  };
}

/** A tool's output as the SDK gives it (a string): its JSON when it is JSON. */
function parseOutput(output: string): unknown {
  try {
    return JSON.parse(output);
  } catch {
    return output;
  }
}

function asJson(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
