import {
  callRejectionMessage,
  Countersign,
  CountersignError,
  type Batch,
  type BatchInput,
  type FetchLike,
  type RunSession,
} from "@countersign/sdk";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";

// The Countersign side of the gateway: one run per MCP session (created at its first tools/call),
// one batch per call, the run taken back after each decision so the upstream's outcome is
// reported on it as `tool.completed` / `tool.failed`, and the run completed when the session ends.
// Calls go one at a time (RunSession.exclusive): a run holds one pause at a time, and a pause
// ends the claim the previous call's report needs.

export type SessionFacts = {
  /** the upstream's name on cards and in policies (`--name`, else its serverInfo.name) */
  server: string;
  serverVersion: string | null;
  /** the MCP client's name and version from its initialize */
  client: string | null;
  clientVersion: string | null;
  upstreamTransport: "stdio" | "http" | "sse";
};

export type GatedCall = {
  toolName: string;
  args: Record<string, unknown>;
  /** the tool as the upstream lists it (schema, description, annotations), when it does */
  tool: Tool | null;
  signal: AbortSignal;
  /** the client sent a progress token (so progress can keep it waiting) */
  progress: boolean;
  /** what the model's client is told while the call waits (progress) */
  onStatus: (message: string) => void;
};

export type GateSettings = {
  /** the queue (id or name) cards go to; null: the agent key's */
  queue: string | null;
  /** the decision's deadline on the server; null: the queue's */
  timeoutSecs: number | null;
  /**
   * After this long a waiting call is answered "still awaiting approval at URL, call again" and its
   * card stays. null: 50 s for a client that sent no progress token (it cannot be kept waiting, and
   * MCP clients commonly give up at 60 s), no limit for one that did; 0: never.
   */
  answerWithinMs: number | null;
};

/** A card whose client was told to call again; the identical call picks up its decision once. */
type Parked = {
  batch: Batch;
  toolCallId: string;
  args: Record<string, unknown>;
  settled: Promise<Batch>;
};

export const DEFAULT_ANSWER_WITHIN_MS = 50_000;

/** Thrown when the MCP client cancelled the call: no answer is sent for a cancelled request. */
export class CallCancelled extends Error {}

/** The largest result text reported to Countersign (the run page shows it; the client gets all). */
const REPORT_TEXT_LIMIT = 2000;

export class CountersignGate {
  readonly client: Countersign;
  private session: Promise<RunSession> | null = null;
  /** cards whose client got "still awaiting approval", by tool and canonical args */
  private readonly parked = new Map<string, Parked>();
  private readonly sessionEnd = new AbortController();
  /** cards a call of this session is waiting on now (in wait()) */
  private waitingCards = 0;
  /** calls of this session in the gate now (they go one at a time) */
  private calls = 0;
  private readonly workerId = `mcp-gateway-${randomUUID().slice(0, 8)}`;

  constructor(
    /** `fetch`: how the SDK reaches Countersign (a hosted gateway calls its own API in-process) */
    options: { baseUrl: string; apiKey: string; fetch?: FetchLike },
    private readonly facts: () => SessionFacts,
    private readonly settings: GateSettings,
  ) {
    // A few quick retries: when Countersign is down, the model hears so within seconds (fail
    // closed) rather than after the SDK's default backoff.
    this.client = new Countersign({
      ...options,
      retry: { retries: 2, minDelayMs: 200, maxDelayMs: 1000 },
      requestTimeoutMs: 15_000,
    });
  }

  /** The session's run, created on first use; a failed creation is tried again next call. */
  private runSession(): Promise<RunSession> {
    if (!this.session) {
      const facts = this.facts();
      this.session = this.client
        .startRun(
          {
            metadata: {
              via: "countersign-mcp-gateway",
              mcp: {
                server: facts.server,
                serverVersion: facts.serverVersion,
                client: facts.client,
                clientVersion: facts.clientVersion,
                upstreamTransport: facts.upstreamTransport,
              },
            },
          },
          { workerId: this.workerId, leaseSecs: 300 },
        )
        .catch((error: unknown) => {
          this.session = null;
          throw error;
        });
    }
    return this.session;
  }

  /**
   * Puts one tools/call to Countersign and, when it is approved, runs `forward` with exactly the
   * approved arguments and reports what the upstream answered. Resolves with the result for the
   * MCP client (`isError` when refused or when Countersign could not be asked); throws
   * CallCancelled when the client cancelled, and rethrows what `forward` threw.
   */
  async call(
    call: GatedCall,
    forward: (args: Record<string, unknown>) => Promise<CallToolResult>,
  ): Promise<CallToolResult> {
    let session: RunSession;
    try {
      session = await this.runSession();
    } catch (error) {
      return notAsked(error);
    }
    const key = callKey(call.toolName, call.args);
    const parked = this.parked.get(key);
    if (parked) return this.pickUp(session, key, parked, call, forward);

    // Said only when the wait is a real one (a card is waiting for a person), not while an earlier
    // call finishes its report.
    const busy =
      this.calls > 0
        ? setTimeout(() => {
            if (!started && (this.waitingCards > 0 || this.parked.size > 0))
              call.onStatus("Waiting for an earlier call of this session to be decided.");
          }, 1_000)
        : undefined;
    this.calls++;
    const answer = deferred<CallToolResult>();
    // Once the client has its answer (the deadline passed while queued), the call never starts.
    let answered = false;
    let started = false;
    const deadline = this.deadline(call);
    void deadline.promise.then(() => {
      // A call already asked waits for its own card instead (wait() sees the deadline too).
      if (answered || started) return;
      answered = true;
      answer.resolve(
        refused(
          "Not asked yet: an earlier call of this session is still awaiting approval on Countersign, and calls go one at a time. Nothing ran; call again later.",
        ),
      );
    });
    session
      .exclusive(async () => {
        if (answered) return;
        started = true;
        if (call.signal.aborted) throw new CallCancelled();
        const toolCallId = `${call.toolName.slice(0, 100)}-${randomUUID().slice(0, 12)}`;
        let paused: Batch;
        try {
          paused = await this.pause(session, call, toolCallId);
        } catch (error) {
          if (call.signal.aborted) throw new CallCancelled();
          answered = true;
          return answer.resolve(notAsked(error));
        }
        let settled = paused;
        if (paused.status === "pending") {
          const waited = await this.wait(paused, call, deadline.promise);
          if (waited === "deadline") {
            // The card stays in the queue; the identical call picks up its decision. The session
            // waits for it meanwhile (a run holds one pause at a time).
            const entry: Parked = {
              batch: paused,
              toolCallId,
              args: call.args,
              settled: this.settleInBackground(paused),
            };
            this.parked.set(key, entry);
            answered = true;
            answer.resolve(awaiting(call.toolName, paused));
            await entry.settled.catch(() => {});
            return;
          }
          settled = waited;
        }
        answered = true;
        await this.finish(session, settled, toolCallId, call.args, forward, answer.resolve);
      })
      .catch((error: unknown) => {
        answered = true;
        answer.reject(error);
      })
      .finally(() => {
        clearTimeout(busy);
        deadline.cancel();
        this.calls--;
      });
    return answer.promise;
  }

  /** The identical call again: answered from its parked card's decision (once), or still waiting. */
  private async pickUp(
    session: RunSession,
    key: string,
    parked: Parked,
    call: GatedCall,
    forward: (args: Record<string, unknown>) => Promise<CallToolResult>,
  ): Promise<CallToolResult> {
    call.onStatus(waitingStatus(parked.batch));
    const deadline = this.deadline(call);
    const cancelled = new Promise<"cancelled">((resolve) => {
      if (call.signal.aborted) resolve("cancelled");
      call.signal.addEventListener("abort", () => resolve("cancelled"), { once: true });
    });
    const first = await Promise.race([
      parked.settled,
      deadline.promise.then(() => "deadline" as const),
      cancelled,
    ]).finally(() => deadline.cancel());
    if (first === "deadline") return awaiting(call.toolName, parked.batch);
    if (this.parked.get(key) !== parked) {
      // Another identical call used the decision meanwhile: this one is asked afresh.
      return this.call(call, forward);
    }
    this.parked.delete(key);
    if (first === "cancelled") {
      await this.withdraw(parked.batch, "The MCP client cancelled the tool call.");
      throw new CallCancelled();
    }
    this.calls++;
    const answer = deferred<CallToolResult>();
    session
      .exclusive(() =>
        this.finish(session, first, parked.toolCallId, parked.args, forward, answer.resolve),
      )
      .catch(answer.reject)
      .finally(() => this.calls--);
    return answer.promise;
  }

  /**
   * After the decision: a refusal, or the approved call forwarded and its outcome reported.
   * `answer` gets the client's result as soon as there is one; the bookkeeping after it (taking the
   * run back, reporting) still holds the session's lock but not the client.
   */
  private async finish(
    session: RunSession,
    settled: Batch,
    toolCallId: string,
    askedArgs: Record<string, unknown>,
    forward: (args: Record<string, unknown>) => Promise<CallToolResult>,
    answer: (result: CallToolResult) => void,
  ): Promise<void> {
    const decided = settled.calls.find((c) => c.toolCallId === toolCallId) ?? null;
    if (decided?.status !== "approved") {
      answer(refused(callRejectionMessage(decided, settled, { nameReviewer: true })));
      // Taken back now, the run's next pause is one request rather than a refused one and two.
      if (settled.status !== "cancelled" && session.claim?.state !== "held")
        await session.takeBack().catch(() => {});
      return;
    }
    // The outcome is reported on the run, which needs it back from the decision: taken while the
    // call runs, so the client does not wait for it.
    const claimed: Promise<boolean> =
      session.claim?.state === "held"
        ? Promise.resolve(true)
        : session.takeBack().then(
            () => true,
            (error: unknown) => {
              warn("could not take the run back to report on it")(error);
              return false;
            },
          );
    const edited = decided.decision?.editedArgs;
    const runArgs = isObject(edited) ? edited : askedArgs;
    const changed = isObject(edited) ? changedKeys(askedArgs, edited) : [];
    let result: CallToolResult;
    try {
      result = await forward(runArgs);
    } catch (error) {
      if (await claimed)
        await session
          .reportToolFailure(toolCallId, error instanceof Error ? error : String(error))
          .catch(warn("could not report the failure"));
      throw error;
    }
    const by = decided.decision?.by?.name ?? "A reviewer";
    answer(
      changed.length === 0
        ? result
        : {
            ...result,
            content: [
              ...(result.content ?? []),
              {
                type: "text" as const,
                text: `Note: ${by} changed ${changed.map((k) => `'${k}'`).join(", ")} before approving; the tool ran with these arguments: ${JSON.stringify(runArgs)}`,
              },
            ],
          },
    );
    if (!(await claimed)) return;
    const summary = reportedResult(result);
    await (
      result.isError
        ? session.reportToolFailure(toolCallId, summary)
        : session.reportToolResult(toolCallId, summary)
    ).catch(warn("could not report the result"));
  }

  /** When the client gets an answer whatever happens: `--answer-within`, else (see GateSettings). */
  private deadline(call: GatedCall): { promise: Promise<void>; cancel: () => void } {
    const ms = this.settings.answerWithinMs ?? (call.progress ? null : DEFAULT_ANSWER_WITHIN_MS);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const promise = new Promise<void>((resolve) => {
      if (ms !== null && ms > 0) timer = setTimeout(resolve, ms);
    });
    return { promise, cancel: () => clearTimeout(timer) };
  }

  /** Follows a parked card until it settles (aborted only when the session ends). */
  private settleInBackground(batch: Batch): Promise<Batch> {
    return this.client.waitForDecision(batch.id, {
      runId: batch.runId,
      signal: this.sessionEnd.signal,
    });
  }

  private async withdraw(batch: Batch, reason: string): Promise<void> {
    await this.client
      .cancelBatch(batch.id, { reason })
      .catch(warn(`could not withdraw batch ${batch.id}`));
  }

  private async pause(session: RunSession, call: GatedCall, toolCallId: string): Promise<Batch> {
    const batch = batchInput(call, toolCallId, this.facts(), this.settings);
    try {
      return await session.pause(batch, { signal: call.signal });
    } catch (error) {
      // A tool schema this server cannot use for checking edits must not block the tool: the call
      // is asked without it (edits then go unchecked, as for any call without a schema).
      if (
        CountersignError.is(error, "invalid_request") &&
        error.issues.some((issue) => issue.path.includes("inputSchema"))
      ) {
        const [first] = batch.calls!;
        return session.pause(
          { ...batch, calls: [{ ...first!, inputSchema: undefined }] },
          { signal: call.signal },
        );
      }
      throw error;
    }
  }

  /**
   * Waits for the decision, or the answer deadline ("deadline": the card stays pending). A
   * cancelled MCP request withdraws its card.
   */
  private async wait(
    paused: Batch,
    call: GatedCall,
    deadline: Promise<void>,
  ): Promise<Batch | "deadline"> {
    call.onStatus(waitingStatus(paused));
    this.waitingCards++;
    const stop = new AbortController();
    const cancelled = () => stop.abort();
    call.signal.addEventListener("abort", cancelled, { once: true });
    void deadline.then(() => stop.abort("deadline"));
    try {
      // Outages while waiting are waited out by the SDK: the card is still in the queue.
      return await this.client.waitForDecision(paused.id, {
        signal: stop.signal,
        runId: paused.runId,
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      if (!call.signal.aborted) return "deadline";
      await this.withdraw(paused, "The MCP client cancelled the tool call.");
      throw new CallCancelled();
    } finally {
      this.waitingCards--;
      call.signal.removeEventListener("abort", cancelled);
    }
  }

  /** Ends the session's run (completed), if one was started. */
  async close(outcome: { failed?: string } = {}): Promise<void> {
    // Nobody is left to pick up the cards still waiting: withdraw them.
    const waiting = [...this.parked.values()];
    this.parked.clear();
    this.sessionEnd.abort();
    await Promise.all(waiting.map((p) => this.withdraw(p.batch, "The MCP session ended.")));
    if (!this.session) return;
    const session = await this.session.catch(() => null);
    if (!session || session.finished) return;
    try {
      // A run whose last batch settled without a claim (a refusal) is taken back to be ended.
      if (session.claim?.state !== "held") await session.takeBack().catch(() => {});
      await (outcome.failed === undefined
        ? session.complete({ via: "countersign-mcp-gateway" })
        : session.fail(new Error(outcome.failed)));
    } catch (error) {
      warn("could not end the run")(error);
    } finally {
      session.release();
    }
  }
}

function batchInput(
  call: GatedCall,
  toolCallId: string,
  facts: SessionFacts,
  settings: GateSettings,
): BatchInput {
  const tool = call.tool;
  const description = tool?.description?.trim() || null;
  const annotations = tool?.annotations ?? null;
  const title = annotations?.title ?? tool?.title ?? null;
  const risks: string[] = [];
  // MCP's default for a tool that is not read-only is "may be destructive".
  if (annotations && annotations.readOnlyHint !== true && annotations.destructiveHint !== false)
    risks.push(`The MCP server marks ${call.toolName} as possibly destructive.`);
  if (annotations?.openWorldHint === true)
    risks.push(`${call.toolName} reaches outside systems (the server marks it open-world).`);
  const from = `MCP server '${facts.server}'${facts.client ? `, client ${facts.client}` : ""}`;
  const summary = `${title ?? call.toolName} via ${from}${description ? `: ${description}` : ""}`;
  return {
    calls: [
      {
        toolCallId,
        toolName: call.toolName,
        args: call.args,
        inputSchema: tool?.inputSchema as Record<string, unknown> | undefined,
        summary: summary.slice(0, 4000),
        risks: risks.length > 0 ? risks : undefined,
        metadata: {
          mcp: {
            server: facts.server,
            tool: `${facts.server}.${call.toolName}`,
            client: facts.client,
            ...(description ? { description: description.slice(0, 2000) } : {}),
            ...(annotations ? { annotations } : {}),
          },
        },
      },
    ],
    ...(settings.queue ? { queue: settings.queue } : {}),
    ...(settings.timeoutSecs ? { timeoutSecs: settings.timeoutSecs } : {}),
  };
}

function waitingStatus(batch: Batch): string {
  return `Waiting for approval in queue '${batch.queue.name}' on Countersign: ${batch.reviewUrl}`;
}

function awaiting(toolName: string, batch: Batch): CallToolResult {
  return refused(
    `This call is awaiting approval in queue '${batch.queue.name}' on Countersign: ${batch.reviewUrl} . It has not run. Call ${toolName} again with exactly the same arguments to pick up the decision (it is used once).`,
  );
}

/** The tool and its arguments in canonical form (sorted keys): what "the identical call" means. */
function callKey(toolName: string, args: Record<string, unknown>): string {
  return `${toolName}\u0000${JSON.stringify(sortKeys(args))}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

/** Countersign could not be asked: fail closed, and say why. */
function notAsked(
  error: unknown,
  lead = "Countersign could not be asked for approval",
): CallToolResult {
  const why =
    error instanceof CountersignError
      ? `${error.message}${error.status ? ` (HTTP ${error.status} ${error.code})` : ` (${error.code})`}`
      : error instanceof Error
        ? error.message
        : String(error);
  return refused(`${lead}: ${why}. The call was not forwarded to the tool; nothing ran.`);
}

function refused(text: string): CallToolResult {
  return { isError: true, content: [{ type: "text", text }] };
}

/** The upstream's answer as reported on the run: its text, capped. */
function reportedResult(result: CallToolResult): Record<string, unknown> {
  const text = (result.content ?? [])
    .map((part) =>
      part.type === "text"
        ? part.text
        : `[${part.type}${"uri" in part ? ` ${String(part.uri)}` : ""}]`,
    )
    .join("\n");
  return {
    isError: result.isError === true,
    text: text.length > REPORT_TEXT_LIMIT ? `${text.slice(0, REPORT_TEXT_LIMIT)}…` : text,
    ...(text.length > REPORT_TEXT_LIMIT ? { truncated: true, length: text.length } : {}),
  };
}

function changedKeys(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...keys].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function warn(what: string) {
  return (error: unknown) =>
    process.stderr.write(
      `countersign-mcp-gateway: ${what}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
}
