import {
  callRejectionMessage,
  Countersign,
  CountersignError,
  type Batch,
  type FetchLike,
  type Call,
} from "@countersign/sdk";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { randomUUID } from "node:crypto";
import { keepAliveFetch } from "./http-fetch.js";
import { OutcomeReports } from "./outcome-reports.js";
import type { OutcomeSpool } from "./spool.js";

// The Countersign side of the gateway. The session is one run (created once, and left
// `running`); each tools/call is ONE request, POST /runs/{id}/gated-calls, which records the call
// as a batch of that run and answers allow / deny / ask at once. Allowed calls are forwarded
// straight away and their outcome is reported afterwards, off the client's critical path
// (outcome-reports.ts). Calls do not wait for each other: a call waiting for a person holds up
// none of the session's others. Which decision a call gets is Countersign's to say, never this
// process's memory: an identical call (same tool, same arguments in canonical form) picks up the
// card of an earlier one whose decision nobody used — after a client gave up waiting, or after
// this gateway restarted — and a decision is used once.

export type SessionFacts = {
  /** the upstream's name on cards and in policies (`--name`, else its serverInfo.name) */
  server: string;
  serverVersion: string | null;
  /** the MCP client's name and version from its initialize */
  client: string | null;
  clientVersion: string | null;
  upstreamTransport: "stdio" | "http" | "sse";
  /**
   * a fingerprint of the upstream (args.ts upstreamFingerprint): decisions are picked up only by
   * a gateway of the same name in front of the same upstream; none: by the name alone
   */
  upstreamId?: string | null;
};

export type GatedCall = {
  toolName: string;
  args: Record<string, unknown>;
  /** the tool as the upstream lists it (schema, description, annotations), when it does */
  tool: Tool | null;
  /**
   * Aborted when the call ends without an answer: with the reason `"cancelled"` when the MCP
   * client cancelled it (its card is withdrawn), with any other when the session ended (its card
   * stays: an identical call of a later session picks up its decision).
   */
  signal: AbortSignal;
  /** the client sent a progress token (so progress can keep it waiting) */
  progress: boolean;
  /** what the model's client is told while the call waits (progress) */
  onStatus: (message: string) => void;
};

/** What the relay needs of a gate: hosted gateways may bring their own. */
export interface ToolGate {
  call(
    call: GatedCall,
    forward: (args: Record<string, unknown>) => Promise<CallToolResult>,
  ): Promise<CallToolResult>;
  close(outcome?: { failed?: string }): Promise<void>;
}

/** The abort reason of a call its MCP client cancelled (notifications/cancelled). */
export const CANCELLED = "cancelled";

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

/** POST /runs/{id}/gated-calls's answer (lib/gated-calls/gated-answer.ts). */
type GatedAnswer = {
  decision: "allow" | "deny" | "ask";
  callId: string;
  pickedUp: boolean;
  batch: Batch;
};

export const DEFAULT_ANSWER_WITHIN_MS = 50_000;

/** Thrown when the MCP client cancelled the call: no answer is sent for a cancelled request. */
export class CallCancelled extends Error {}

/** The largest result text reported to Countersign (the run page shows it; the client gets all). */
const REPORT_TEXT_LIMIT = 2000;
/** how long closing waits for the last outcome reports */
const CLOSE_FLUSH_MS = 5_000;

export class CountersignGate implements ToolGate {
  readonly client: Countersign;
  private readonly perCall: Countersign;
  private run: Promise<string> | null = null;
  private readonly reports: OutcomeReports;

  constructor(
    /**
     * `fetch`: how the SDK reaches Countersign (a hosted gateway calls its own API in-process);
     * `spool`: where outcome reports are kept until Countersign took them (spool.ts)
     */
    options: { baseUrl: string; apiKey: string; fetch?: FetchLike; spool?: OutcomeSpool | null },
    private readonly facts: () => SessionFacts,
    private readonly settings: GateSettings,
  ) {
    // A few quick retries: when Countersign is down, the model hears so within seconds (fail
    // closed) rather than after the SDK's default backoff.
    const { spool = null, ...connection } = options;
    const clientOptions = {
      ...connection,
      retry: { retries: 2, minDelayMs: 200, maxDelayMs: 1000 },
      requestTimeoutMs: 15_000,
    };
    this.client = new Countersign(clientOptions);
    // The requests every call makes go over kept-alive node:http connections (http-fetch.ts),
    // unless the host says how to reach Countersign (a hosted gateway: in-process).
    this.perCall = new Countersign({ ...clientOptions, fetch: options.fetch ?? keepAliveFetch });
    this.reports = new OutcomeReports(this.perCall, () => this.runId(), say, spool);
  }

  /** The session's run id, created on first use; a failed creation is tried again next call. */
  runId(): Promise<string> {
    if (!this.run) {
      const facts = this.facts();
      this.run = this.client
        .createRun({
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
        })
        .then((run) => run.id)
        .catch((error: unknown) => {
          this.run = null;
          throw error;
        });
    }
    return this.run;
  }

  /**
   * Puts one tools/call to Countersign and, when it is allowed, runs `forward` with exactly the
   * allowed arguments; the outcome is reported afterwards. Resolves with the result for the MCP
   * client (`isError` when refused or when Countersign could not be asked); throws CallCancelled
   * when the client cancelled, and rethrows what `forward` threw.
   */
  async call(
    call: GatedCall,
    forward: (args: Record<string, unknown>) => Promise<CallToolResult>,
    attempt = 0,
  ): Promise<CallToolResult> {
    let runId: string;
    let answer: GatedAnswer;
    try {
      runId = await this.runId();
      if (call.signal.aborted) throw new CallCancelled();
      answer = await this.record(runId, call);
    } catch (error) {
      if (error instanceof CallCancelled || call.signal.aborted) throw new CallCancelled();
      return notAsked(error);
    }
    if (answer.decision === "ask") {
      const used = await this.waitAndUse(runId, answer, call);
      if (used === "deadline") return awaiting(call.toolName, answer.batch);
      // Someone used that decision first (a racing identical call): this call is asked afresh.
      if (used === "used" && attempt < 2) return this.call(call, forward, attempt + 1);
      if (typeof used === "string") return refused(USED_ELSEWHERE[used]);
      answer = used;
    }
    const decided = answer.batch.calls.find((c) => c.id === answer.callId) ?? null;
    if (answer.decision !== "allow" || decided?.status !== "approved")
      return refused(callRejectionMessage(decided, answer.batch, { nameReviewer: true }));
    return this.forwardAllowed(runId, decided, call.args, forward);
  }

  /** An allowed call: forwarded with the approved arguments, its outcome reported afterwards. */
  private async forwardAllowed(
    runId: string,
    decided: Call,
    askedArgs: Record<string, unknown>,
    forward: (args: Record<string, unknown>) => Promise<CallToolResult>,
  ): Promise<CallToolResult> {
    // What runs is Countersign's copy (what the reviewer saw), never this process's: a key the
    // server does not keep (an own `__proto__`) would otherwise reach the tool unseen.
    const recorded = isObject(decided.args) ? decided.args : null;
    if (!recorded || canonical(recorded) !== canonical(askedArgs))
      return refused(
        "Countersign recorded other arguments than this call sent (it keeps no `__proto__` keys), so the reviewer did not see these. The call was not forwarded to the tool; nothing ran.",
      );
    const edited = decided.decision?.editedArgs;
    const runArgs = isObject(edited) ? edited : recorded;
    const changed = isObject(edited) ? changedKeys(askedArgs, edited) : [];
    let result: CallToolResult;
    try {
      result = await forward(runArgs);
    } catch (error) {
      this.reports.add(
        {
          callId: decided.id,
          type: "tool.failed",
          error: error instanceof Error ? error.message.slice(0, REPORT_TEXT_LIMIT) : String(error),
        },
        runId,
      );
      throw error;
    }
    const summary = reportedResult(result);
    this.reports.add(
      result.isError
        ? { callId: decided.id, type: "tool.failed", error: summary }
        : { callId: decided.id, type: "tool.completed", result: summary },
      runId,
    );
    if (changed.length === 0) return result;
    const by = decided.decision?.by?.name ?? "A reviewer";
    return {
      ...result,
      content: [
        ...(result.content ?? []),
        {
          type: "text" as const,
          text: `Note: ${by} changed ${changed.map((k) => `'${k}'`).join(", ")} before approving; the tool ran with these arguments: ${JSON.stringify(runArgs)}`,
        },
      ],
    };
  }

  /** One request: the call recorded and answered allow / deny / ask (see the file's comment). */
  private async record(runId: string, call: GatedCall): Promise<GatedAnswer> {
    const body = gatedCallBody(call, this.facts(), this.settings);
    // Outcomes of earlier calls waiting to be reported ride along (one commit, not two); those
    // the server did not take go back in the queue.
    const post = async (input: Record<string, unknown>) => {
      const outcomes = this.reports.take();
      let reported: string[] | null = null;
      try {
        const answer = await this.perCall.transport.request<GatedAnswer & { reported?: string[] }>({
          method: "POST",
          path: `/runs/${encodeURIComponent(runId)}/gated-calls`,
          body: outcomes.length > 0 ? { ...input, outcomes } : input,
          signal: call.signal,
        });
        reported = answer.reported ?? [];
        return answer;
      } finally {
        this.reports.settle(outcomes, reported);
      }
    };
    try {
      return await post(body);
    } catch (error) {
      // A tool schema this server cannot use for checking edits must not block the tool: the call
      // is asked without it (edits then go unchecked, as for any call without a schema).
      if (
        CountersignError.is(error, "invalid_request") &&
        error.issues.some((issue) => issue.path.includes("inputSchema"))
      ) {
        const { inputSchema: _dropped, ...rest } = body;
        return post(rest);
      }
      throw error;
    }
  }

  /**
   * Waits for the card's decision and uses it (once), or gives up at the answer deadline
   * ("deadline": the card stays, unused, for the identical call to pick up). A cancelled MCP
   * request withdraws its card.
   */
  private async waitAndUse(
    runId: string,
    asked: GatedAnswer,
    call: GatedCall,
  ): Promise<GatedAnswer | "deadline" | keyof typeof USED_ELSEWHERE> {
    const waited = await this.wait(asked.batch, call, asked.pickedUp);
    if (waited === "deadline") return "deadline";
    // Decided just as the client left: the decision stays unused, for its identical call.
    if (call.signal.aborted) throw new CallCancelled();
    try {
      return await this.perCall.transport.request<GatedAnswer>({
        method: "POST",
        path: `/runs/${encodeURIComponent(runId)}/gated-calls/${encodeURIComponent(asked.callId)}/use`,
      });
    } catch (error) {
      if (CountersignError.is(error, "already_claimed")) return "used";
      if (CountersignError.is(error, "not_pending")) return "withdrawn";
      return "unreachable";
    }
  }

  /**
   * Waits for the decision, or the answer deadline. A cancelled MCP request withdraws its card,
   * never a card it picked up (an earlier call's, which that call may still be waiting on).
   */
  private async wait(
    paused: Batch,
    call: GatedCall,
    pickedUp: boolean,
  ): Promise<Batch | "deadline"> {
    call.onStatus(waitingStatus(paused));
    const stop = new AbortController();
    const ms = this.settings.answerWithinMs ?? (call.progress ? null : DEFAULT_ANSWER_WITHIN_MS);
    const timer = ms !== null && ms > 0 ? setTimeout(() => stop.abort("deadline"), ms) : undefined;
    const ended = () => stop.abort(call.signal.reason);
    if (call.signal.aborted) ended();
    else call.signal.addEventListener("abort", ended, { once: true });
    try {
      // Outages while waiting are waited out by the SDK: the card is still in the queue.
      return await this.client.waitForDecision(paused.id, {
        signal: stop.signal,
        runId: paused.runId,
      });
    } catch (error) {
      if (!stop.signal.aborted) throw error;
      if (!call.signal.aborted) return "deadline";
      // Only the client's own cancellation withdraws the card; a session that ended leaves it
      // for the identical call of a later session (a restarted gateway) to pick up.
      if (call.signal.reason === CANCELLED && !pickedUp)
        await this.client
          .cancelBatch(paused.id, { reason: "The MCP client cancelled the tool call." })
          .catch(warn(`could not withdraw batch ${paused.id}`));
      throw new CallCancelled();
    } finally {
      clearTimeout(timer);
      call.signal.removeEventListener("abort", ended);
    }
  }

  /** Sends the last outcome reports, then ends the session's run (completed, or failed). */
  async close(outcome: { failed?: string } = {}): Promise<void> {
    const unsent = await this.reports.flush(CLOSE_FLUSH_MS);
    if (unsent > 0) say(`${unsent} tool outcome report(s) could not be sent before closing`);
    if (!this.run) return;
    const runId = await this.run.catch(() => null);
    if (!runId) return;
    await this.client
      .completeRun(
        runId,
        outcome.failed === undefined
          ? { outcome: "completed", result: { via: "countersign-mcp-gateway" } }
          : { outcome: "failed", error: { message: outcome.failed } },
      )
      .catch(warn("could not end the run"));
  }
}

const USED_ELSEWHERE = {
  used: "The decision on this call was already used by another identical call (an approval is used once). Nothing ran; call again to be asked afresh.",
  withdrawn: "This call's card was withdrawn before it was decided. Nothing ran.",
  unreachable:
    "The call was decided, but Countersign could not be reached to use the decision. Nothing ran; call again with exactly the same arguments to pick it up.",
};

function gatedCallBody(
  call: GatedCall,
  facts: SessionFacts,
  settings: GateSettings,
): Record<string, unknown> {
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
    gateway: facts.server,
    ...(facts.upstreamId ? { upstream: facts.upstreamId } : {}),
    toolCallId: `${call.toolName.slice(0, 100)}-${randomUUID().slice(0, 12)}`,
    toolName: call.toolName,
    args: call.args,
    ...(tool?.inputSchema ? { inputSchema: tool.inputSchema } : {}),
    summary: summary.slice(0, 4000),
    ...(risks.length > 0 ? { risks } : {}),
    metadata: {
      mcp: {
        server: facts.server,
        tool: `${facts.server}.${call.toolName}`,
        client: facts.client,
        ...(description ? { description: description.slice(0, 2000) } : {}),
        ...(annotations ? { annotations } : {}),
      },
    },
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

/** JSON with every object's own keys sorted: equal for equal arguments in any key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null)
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(",")}}`;
  return JSON.stringify(value) ?? "null";
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function say(line: string) {
  process.stderr.write(`countersign-mcp-gateway: ${line}\n`);
}

function warn(what: string) {
  return (error: unknown) =>
    process.stderr.write(
      `countersign-mcp-gateway: ${what}: ${error instanceof Error ? error.message : String(error)}\n`,
    );
}
