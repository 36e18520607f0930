import type { Countersign } from "./client.js";
import { CountersignError } from "./errors.js";
import { newIdempotencyKey } from "./http.js";
import { rejectionMessage } from "./rejection.js";
import type { RunSession } from "./run-session.js";
import type {
  Batch,
  Call,
  CallInput,
  CreateRunInput,
  DecisionSource,
  Ref,
  TimeoutAction,
} from "./types.js";
import type { WaitOptions } from "./wait-for-decision.js";

// gate(tool, options) wraps a tool function so that, when a call needs approval, it runs only
// after a person approved it (with their edited args, if they edited), and a rejection comes back
// as a value the model can read instead of an exception.

/** What a gated tool returns instead of running, when its call was not approved. */
export type GateRejection = {
  rejected: true;
  /** the reviewer's or the policy's reason, the deadline's explanation, or null */
  reason: string | null;
  /** the reviewer who rejected, or null (a policy, the deadline, a withdrawal) */
  decidedBy: Ref | null;
  /** `reviewer`, `policy` (blocked by a rule), `timeout` (no decision by the deadline), `memory`, or `cancelled` (the request was withdrawn) */
  source: DecisionSource | "cancelled";
  /** a deny rule blocked the call before any reviewer saw it */
  blocked: boolean;
  toolName: string;
  toolCallId: string;
  runId: string;
  batchId: string;
  /** one sentence for the model, e.g. "The reviewer rejected this call: wrong customer. The tool was not run." */
  message: string;
};

export type GateOptions<Args, Result> = {
  client: Countersign;
  toolName: string;
  /**
   * The run the calls belong to: a RunSession, a run id (its session is `client.session(id)`), or a
   * function giving either (called per call). Omitted or null: every gated call gets a run of its
   * own, completed (or failed) once the call is done.
   */
  run?:
    | RunSession
    | string
    | null
    | (() => RunSession | string | null | Promise<RunSession | string | null>);
  /** default true */
  needsApproval?: boolean | ((args: Args) => boolean | Promise<boolean>);
  summary?: (args: Args) => string;
  risks?: string[] | ((args: Args) => string[]);
  costEstimate?: (args: Args) => number | undefined;
  /** JSON Schema of the args: reviewers' edits are validated against it */
  inputSchema?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** a queue id or name the agent key may target */
  queue?: string;
  /** the server-side deadline of the decision */
  timeoutSecs?: number;
  /** what the deadline does (default reject: fail closed) */
  onTimeout?: TimeoutAction;
  /** data to undo the call later, reported with its result (see runRollback) */
  revert?: (args: Args, result: Result) => unknown;
  /** the toolCallId to use (a framework's own id); default a fresh one per call */
  toolCallId?: (args: Args, ...rest: unknown[]) => string | undefined;
  /** for runs the gate creates itself */
  newRun?: Omit<CreateRunInput, "batch">;
  /** how to wait: `signal` aborts (the request is withdrawn, the wrapper rejects); `timeoutMs`
   * gives up (withdrawn too, answered as a GateRejection with source `cancelled`) */
  wait?: Omit<WaitOptions, "runId">;
  /** reporting the outcome to Countersign failed after the tool ran (default: console.warn) */
  onReportError?: (error: unknown) => void;
};

export function gate<Args extends object, Result, Rest extends unknown[] = []>(
  tool: (args: Args, ...rest: Rest) => Result | Promise<Result>,
  options: GateOptions<Args, Result>,
): (args: Args, ...rest: Rest) => Promise<Result | GateRejection> {
  const { client, toolName } = options;
  const report = (promise: Promise<unknown>) =>
    promise.catch(
      options.onReportError ??
        ((error: unknown) => console.warn(`Countersign: could not report on ${toolName}:`, error)),
    );

  return async (args, ...rest) => {
    const needed =
      typeof options.needsApproval === "function"
        ? await options.needsApproval(args)
        : (options.needsApproval ?? true);
    if (!needed) return tool(args, ...rest);

    const given = await resolveRun(client, options.run);
    const session = given ?? (await client.startRun(options.newRun ?? {}));
    const owned = given === null;
    return session.exclusive(async () => {
      const toolCallId =
        options.toolCallId?.(args, ...rest) ??
        `${toolName.slice(0, 100)}-${newIdempotencyKey().slice(0, 12)}`;
      let settled: Batch;
      try {
        settled = await session.ask(
          {
            calls: [callInput(options, toolCallId, args)],
            queue: options.queue,
            timeoutSecs: options.timeoutSecs,
            onTimeout: options.onTimeout,
          },
          options.wait,
        );
      } catch (error) {
        if (!CountersignError.is(error, "wait_timeout")) {
          // A run of our own is ended, where it can be (a withdrawn request leaves it running).
          if (owned) await session.fail(error).catch(() => {});
          throw error;
        }
        const withdrawn = error.current as Batch | null;
        if (owned) await report(session.complete({ rejected: true, source: "cancelled" }));
        return rejection(cancelledCall(toolName, toolCallId), withdrawn, session.runId, {
          waitedOut: true,
        });
      }

      const call = settled.calls.find((c) => c.toolCallId === toolCallId);
      if (!call) throw new Error(`Countersign: call ${toolCallId} is missing from its batch.`);
      if (call.status !== "approved") {
        const answer = rejection(call, settled, session.runId);
        if (owned) await report(session.complete({ rejected: true, source: answer.source }));
        return answer;
      }

      const edited = call.decision?.editedArgs;
      const runArgs = isObject(edited) ? (edited as Args) : args;
      let result: Result;
      try {
        result = await tool(runArgs, ...rest);
      } catch (error) {
        await report(session.reportToolFailure(toolCallId, error));
        if (owned) await report(session.fail(error));
        throw error;
      }
      await report(
        session.reportToolResult(toolCallId, asJson(result), {
          revert: options.revert?.(runArgs, result),
        }),
      );
      if (owned) await report(session.complete());
      return result;
    });
  };
}

async function resolveRun(
  client: Countersign,
  run: GateOptions<never, never>["run"],
): Promise<RunSession | null> {
  const value = typeof run === "function" ? await run() : run;
  if (value === undefined || value === null) return null;
  return typeof value === "string" ? client.session(value) : value;
}

function callInput<Args, Result>(
  options: GateOptions<Args, Result>,
  toolCallId: string,
  args: Args,
): CallInput {
  return {
    toolCallId,
    toolName: options.toolName,
    args: args as Record<string, unknown>,
    inputSchema: options.inputSchema,
    summary: options.summary?.(args),
    risks: typeof options.risks === "function" ? options.risks(args) : options.risks,
    costEstimate: options.costEstimate?.(args),
    metadata: options.metadata,
  };
}

function rejection(
  call: Pick<Call, "toolName" | "toolCallId" | "status" | "decision"> & { batchId?: string },
  batch: Batch | null,
  runId: string,
  how: { waitedOut?: boolean } = {},
): GateRejection {
  const decision = call.decision;
  const blocked = decision?.policy?.blocked ?? false;
  const source: GateRejection["source"] =
    call.status === "cancelled" || !decision ? "cancelled" : decision.source;
  const reason = how.waitedOut
    ? "No decision came in time; the request was withdrawn."
    : source === "cancelled"
      ? (batch?.cancelReason ?? null)
      : (decision?.reason ?? null);
  return {
    rejected: true,
    reason,
    decidedBy: decision?.by ?? null,
    source,
    blocked,
    toolName: call.toolName,
    toolCallId: call.toolCallId,
    runId,
    batchId: batch?.id ?? call.batchId ?? "",
    message: how.waitedOut
      ? "No reviewer decided in time, so the approval request was withdrawn. The tool was not run."
      : rejectionMessage({ source, blocked, reason }),
  };
}

function cancelledCall(toolName: string, toolCallId: string) {
  return { toolName, toolCallId, status: "cancelled" as const, decision: null };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The result as JSON the server can store (undefined stays undefined: no `result` field). */
function asJson(value: unknown): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return String(value);
  }
}
