import { z } from "zod";
import { getDb } from "@/db/client";
import { readTogether } from "@/db/prepared-read";
import { StateMoved } from "@/db/write-batch";
import { actionHash } from "@/lib/batches/action-hash";
import { parseInput } from "@/lib/input/parse";
import { loadBatchView } from "@/lib/read-models/batch-run-views";
import { requireAgent, type Actor } from "@/lib/auth/actor";
import { CallInput, type CreateBatchInput } from "@/lib/batches/batch-input";
import { pauseSettingsGuard } from "@/lib/batches/pause-settings";
import {
  chooseQueue,
  planOpenBatch,
  readPauseContextWith,
  untilPaused,
} from "@/lib/batches/open-batch";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";
import { commit } from "@/lib/events/commit";
import {
  HOSTED_GATEWAY_PREFIX,
  type HostedGatewayRef,
} from "@/lib/mcp-gateways/hosted-call-marker";
import { SingleLineText } from "@/lib/text/stored-text";
import {
  GatedOutcome,
  outcomeCallsRead,
  outcomeCallsValues,
  planOutcomes,
} from "./report-gated-outcomes";
import {
  assertGatewayRun,
  gatedAnswer,
  PICKUP_WINDOW_MS,
  planUse,
  runStillRunning,
  unusedCallRead,
  type GatedCallAnswer,
} from "./gated-answer";

export const RecordGatedCallInput = CallInput.extend({
  /** the gateway's name (its upstream MCP server): a decision is picked up by the same gateway only */
  gateway: SingleLineText.min(1)
    .max(200)
    .refine((name) => !name.startsWith(HOSTED_GATEWAY_PREFIX), {
      message: `'${HOSTED_GATEWAY_PREFIX}' names are reserved for the server's hosted gateways`,
    }),
  /**
   * a fingerprint of the gateway's upstream (a hash of its command or URL): a decision is picked
   * up only by a gateway of the same name in front of the same upstream
   */
  upstream: SingleLineText.min(1).max(200).optional(),
  /** a queue id or name the agent key may target; else routing, else the key's default */
  queue: SingleLineText.min(1).max(200).optional(),
  timeoutSecs: z
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .optional(),
  /**
   * outcomes of this run's earlier calls that were waiting to be reported: recorded in this
   * call's write (one commit rather than two); the answer's `reported` lists the ones taken
   */
  outcomes: z.array(GatedOutcome).max(100).optional(),
});
export type RecordGatedCallInput = z.infer<typeof RecordGatedCallInput>;

/**
 * An MCP gateway's tool call, recorded and answered in one request: a batch of one call on the
 * session's run (which stays `running`), settled at once by policy, memory or the agent's mode
 * (allow / deny, used at once), or left for a person (ask). A call no rule settles first picks up
 * the card of an earlier identical call of this agent's gateway (same tool and canonical
 * arguments: the action hash) whose decision nobody used, made within the pick-up window
 * (PICKUP_WINDOW_MS) and in the queue this call would go to now: decided, it is answered from
 * that decision and used (once); still waiting, the gateway waits on that card instead of a new one.
 * A deny rule in force wins over an earlier approval.
 * A hosted gateway's calls (`hosted`, known only in-process) are keyed `hosted:<its id>`, which
 * no agent can send: an agent calling the API itself with the gateway's name never writes a card
 * that gateway picks up, and a renamed or re-created gateway does not inherit unused approvals.
 */
export async function recordGatedCall(
  actor: Actor,
  runId: string,
  body: unknown,
  hosted: HostedGatewayRef | null = null,
): Promise<{ answer: GatedCallAnswer & { reported: string[] }; created: boolean }> {
  const agent = requireAgent(actor);
  // An own `__proto__` key of the arguments: the schema's record would drop it silently, so the
  // card (and its hash) would leave out a key the gateway's copy still holds. Refused instead.
  if (isObject(body) && isObject(body.args) && Object.hasOwn(body.args, "__proto__"))
    throw new InvalidRequestError("Invalid request: args: a key named __proto__ is not accepted", [
      { path: "args.__proto__", message: "a key named __proto__ is not accepted" },
    ]);
  const input = parseInput(RecordGatedCallInput, body);
  const { gateway: named, upstream, queue, timeoutSecs, outcomes = [], ...asked } = input;
  const server = hosted?.name ?? named;
  const gateway = hosted ? `${HOSTED_GATEWAY_PREFIX}${hosted.id}` : named;
  // The pick-up key: the gateway, and its upstream's fingerprint when it sent one (a name
  // holds no line break, so the two cannot run together).
  const pickupKey = upstream === undefined ? gateway : `${gateway}\n${upstream}`;
  // Policies match `server.tool` (metadata.mcp.tool): the gateway's name is the server's.
  const mcp = isObject(asked.metadata?.mcp) ? asked.metadata.mcp : {};
  const call = {
    ...asked,
    metadata: {
      ...asked.metadata,
      mcp: { ...mcp, server, tool: `${server}.${asked.toolName}` },
    },
  };
  const batchInput: CreateBatchInput = {
    kind: "action",
    calls: [call],
    onTimeout: "reject",
    ...(queue !== undefined && { queue }),
    ...(timeoutSecs !== undefined && { timeoutSecs }),
  };
  return untilPaused(async (read) => {
    // One read batch (one round trip over a libSQL server): the pause's reads, and the calls
    // whose outcomes came along.
    const [context, [reportedCalls]] = await readPauseContextWith(
      agent,
      { runId, idempotency: null, batch: batchInput },
      read,
      [outcomeCallsRead()],
      outcomeCallsValues(agent, outcomes),
    );
    const run = context.run;
    if (!run || run.agentKeyId !== agent.id) throw new NotFoundError("Run");
    await assertGatewayRun(run);
    const now = Date.now();
    // Refused outcomes can never be recorded: they are listed as taken, so the gateway drops them.
    const reports = planOutcomes(agent, run, outcomes, reportedCalls, now);
    const reported = [
      ...reports.recorded,
      ...reports.alreadyReported,
      ...reports.refused.map((r) => r.callId),
    ];
    const opened = planOpenBatch(
      agent,
      run,
      chooseQueue(agent, context, batchInput),
      context,
      batchInput,
      now,
      pickupKey,
    );
    const [mine] = opened.view.calls;
    if (mine!.status === "pending") {
      const [[unused]] = await readTogether([unusedCallRead()], {
        gateway: pickupKey,
        actionHash: actionHash(call.toolName, call.args),
        agentId: agent.id,
        queueId: opened.view.queue.id,
        since: now - PICKUP_WINDOW_MS,
      });
      if (unused) {
        const earlier = (await loadBatchView(getDb(), unused.batchId, "agent"))!;
        // Branch on the batch just loaded, not on the first read: a reviewer may have decided in
        // between, and an allow is never answered without the use committed (the CAS in planUse
        // is on the status and revision loaded here).
        const status = earlier.calls.find((c) => c.id === unused.id)!.status;
        // withdrawn in between: no card to pick up any more; read again
        if (status === "cancelled") throw new StateMoved();
        // Picking up is right only while the settings still send this call to a reviewer: the
        // use's write is guarded on them, and the pending answer, which writes nothing, is
        // given only from a full read.
        if (status === "pending" && read === "trusting") throw new StateMoved();
        if (status === "pending")
          return {
            answer: { ...gatedAnswer(earlier, unused.id, true), reported: [] },
            created: false,
          };
        await commit([
          pauseSettingsGuard(context.settings),
          ...planUse(agent, run.id, earlier, unused.id, now),
          ...reports.writes,
        ]);
        return { answer: { ...gatedAnswer(earlier, unused.id, true), reported }, created: false };
      }
    }
    await commit([runStillRunning(run.id), ...opened.writes, ...reports.writes]);
    return { answer: { ...gatedAnswer(opened.view, mine!.id, false), reported }, created: true };
  });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
