import { and, eq, inArray, isNull, or } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import {
  batches,
  calls,
  queues,
  rememberedApprovals,
  routingRules,
  type CallStatus,
  type Queue,
  type RoutingRule,
  type Run,
} from "@/db/schema";
import { actionHash } from "@/lib/approvals/action-hash";
import { actorRef, type AgentActor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { appendEvents, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { forReviewers, loadBatchView, type BatchView } from "@/lib/api/views";
import { newId } from "@/lib/ids";
import { evaluateCall, policyDecision, type PolicyVerdict } from "@/lib/policies/evaluate-policy";
import { rulesForQueue } from "@/lib/policies/list-policy-rules";
import { chooseRule } from "@/lib/routing/match-rule";
import type { CallInput, CreateBatchInput } from "./batch-input";
import { settleBatchIfDone } from "./settle-batch";

export type QueueChoice = { queue: Queue; rule: RoutingRule | null };

/**
 * The queue a batch goes to: the one named, if the key may target it; else the first routing
 * rule that matches the batch; else the key's default queue.
 */
export async function resolveQueue(
  tx: Transaction,
  agent: AgentActor,
  batch: Pick<CreateBatchInput, "queue" | "calls"> | undefined,
): Promise<QueueChoice> {
  const requested = batch?.queue;
  if (requested === undefined) {
    const rule = batch
      ? chooseRule(await activeRules(tx), { agentKeyId: agent.id, calls: batch.calls })
      : null;
    const [queue] = await tx
      .select()
      .from(queues)
      .where(eq(queues.id, rule?.queueId ?? agent.defaultQueueId));
    if (queue!.archivedAt !== null) {
      throw new ConflictError(
        "queue_archived",
        `This agent key's default queue '${queue!.name}' is archived; name another queue it may target, or ask an admin for a new key.`,
        null,
      );
    }
    return { queue: queue!, rule };
  }
  const [queue] = await tx
    .select()
    .from(queues)
    .where(or(eq(queues.id, requested), eq(queues.name, requested)));
  // A queue the key may not target is answered exactly like one that does not exist (404), so
  // keys cannot probe other teams' queue names.
  if (!queue || !agent.queueIds.includes(queue.id)) {
    throw new NotFoundError(`Queue '${requested}' (among the queues this agent key may target)`);
  }
  if (queue.archivedAt !== null) {
    throw new ConflictError("queue_archived", `Queue '${queue.name}' is archived.`, null);
  }
  return { queue, rule: null };
}

/** Enabled rules whose queue still takes batches. */
async function activeRules(tx: Transaction): Promise<RoutingRule[]> {
  const rows = await tx
    .select({ rule: routingRules })
    .from(routingRules)
    .innerJoin(queues, eq(queues.id, routingRules.queueId))
    .where(and(eq(routingRules.enabled, true), isNull(queues.archivedAt)));
  return rows.map((r) => r.rule);
}

/**
 * A plan is reviewed as one call whose args are the plan. Its input schema lets a reviewer's
 * edit change the summary only (the agent gets it back as decision.editedArgs.summary): every
 * other part of the plan is what the agent proposed, and stays so.
 */
function planAsCall(plan: NonNullable<CreateBatchInput["plan"]>): CallInput {
  const fixed = Object.fromEntries(
    Object.entries(plan)
      .filter(([key]) => key !== "summary")
      .map(([key, value]) => [key, { const: value }]),
  );
  return {
    toolCallId: "plan",
    toolName: "plan",
    args: plan,
    summary: plan.summary,
    risks: plan.risks,
    inputSchema: {
      type: "object",
      properties: { summary: { type: "string", minLength: 1, maxLength: 4000 }, ...fixed },
      required: ["summary", ...Object.keys(fixed)],
      additionalProperties: false,
    },
  };
}

/** How a call starts out: pending for a reviewer, or settled at once by policy or memory. */
type Settlement =
  | { kind: "review" }
  | { kind: "memory"; approvedBy: string | null; scope: "run" | "conversation" }
  | { kind: "policy"; outcome: "approved" | "rejected"; verdict: PolicyVerdict };

/**
 * Inserts a pending batch and its calls for `run` (whose status the caller has already moved),
 * settles at once the calls that policy or a remembered approval decides, and appends the
 * events. Returns the batch as its agent sees it after that.
 *
 * Order per call: the agent's mode `off` approves; a deny rule blocks; an allow rule (or mode
 * `allow`) approves; a remembered approval approves; mode `deny` rejects; else a reviewer decides.
 */
export async function openBatch(
  tx: Transaction,
  agent: AgentActor,
  run: Pick<Run, "id" | "conversationId">,
  { queue, rule }: QueueChoice,
  input: CreateBatchInput,
  now: number,
): Promise<BatchView> {
  const batchId = newId();
  const batchCalls = input.calls.length > 0 ? input.calls : [planAsCall(input.plan!)];
  const hashes = batchCalls.map((call) => actionHash(call.toolName, call.args));
  const mode = agent.mode;
  // Rules judge tool calls; a plan meets only the agent's mode.
  const rules = input.kind === "plan" ? [] : await rulesForQueue(tx, queue.id);
  const memories = await rememberedApprovalsFor(tx, agent, run, queue, hashes);
  const settlements = batchCalls.map((call, position): Settlement => {
    const verdict = evaluateCall(rules, call, { agentKeyId: agent.id, agentMode: mode });
    if (verdict.outcome === "approved" || verdict.outcome === "blocked")
      return {
        kind: "policy",
        outcome: verdict.outcome === "approved" ? "approved" : "rejected",
        verdict,
      };
    const memory = memories.get(hashes[position]!);
    if (memory) return { kind: "memory", approvedBy: memory.approvedBy, scope: memory.scope };
    if (verdict.outcome === "rejected") return { kind: "policy", outcome: "rejected", verdict };
    return { kind: "review" };
  });
  const blocked = (s: Settlement) => s.kind === "policy" && s.verdict.outcome === "blocked";

  await tx.insert(batches).values({
    id: batchId,
    runId: run.id,
    queueId: queue.id,
    kind: input.kind,
    status: "pending",
    plan: input.plan ?? null,
    onTimeout: input.onTimeout,
    callbackUrl: input.callbackUrl ?? null,
    routingRuleId: rule?.id ?? null,
    hiddenFromReviewers: settlements.every(blocked),
    createdAt: now,
    expiresAt: now + (input.timeoutSecs ?? queue.defaultTimeoutSecs) * 1000,
  });
  const rows = batchCalls.map((call, position) => {
    const settlement = settlements[position]!;
    return {
      id: newId(),
      batchId,
      runId: run.id,
      position,
      toolCallId: call.toolCallId,
      toolName: call.toolName,
      args: call.args,
      inputSchema: call.inputSchema ?? null,
      summary: call.summary ?? null,
      risks: call.risks ?? [],
      costEstimate: call.costEstimate ?? null,
      metadata: call.metadata ?? null,
      status: "pending" as CallStatus,
      actionHash: hashes[position]!,
      requiredApprovals: queue.requiredApprovals,
      ...settledFields(settlement, now),
    };
  });
  await tx.insert(calls).values(rows);

  // Reviewers' events never carry a blocked call: their view leaves it out, and the block itself
  // is logged for the run only (queueId null reaches no reviewer stream, live or replayed).
  const hidden = settlements.every(blocked);
  const agentView = (await loadBatchView(tx, batchId, "agent"))!;
  await appendEvents(tx, [
    {
      type: "batch.created",
      runId: run.id,
      batchId,
      queueId: hidden ? null : queue.id,
      actor: actorRef(agent),
      data: { batch: hidden ? agentView : forReviewers(agentView) },
      at: now,
    },
    ...rows.flatMap((row, position) => {
      const settlement = settlements[position]!;
      if (settlement.kind === "review") return [];
      const isBlocked = blocked(settlement);
      return [
        {
          type: isBlocked ? "call.blocked" : "call.decided",
          runId: run.id,
          batchId,
          callId: row.id,
          queueId: isBlocked ? null : queue.id,
          actor: SYSTEM_ACTOR,
          data: {
            outcome: row.decisionOutcome,
            source: row.decisionSource,
            toolName: row.toolName,
            ...(row.decisionScope && { scope: row.decisionScope }),
            ...(row.decisionPolicy && { policy: row.decisionPolicy }),
            ...(row.decisionReason && { reason: row.decisionReason }),
          },
          at: now,
        },
      ];
    }),
  ]);
  if (settlements.every((s) => s.kind === "review")) return agentView;
  const settled = await settleBatchIfDone(tx, batchId, SYSTEM_ACTOR);
  return settled ? (await loadBatchView(tx, batchId, "agent"))! : agentView;
}

function settledFields(settlement: Settlement, now: number) {
  if (settlement.kind === "review") return {};
  if (settlement.kind === "memory") {
    return {
      status: "approved" as CallStatus,
      decisionOutcome: "approved" as const,
      decisionSource: "memory" as const,
      decidedBy: settlement.approvedBy,
      decidedAt: now,
      decisionScope: settlement.scope,
    };
  }
  const { verdict, outcome } = settlement;
  return {
    status: outcome as CallStatus,
    decisionOutcome: outcome,
    decisionSource: "policy" as const,
    decidedAt: now,
    decisionPolicy: policyDecision(verdict),
    decisionReason: outcome === "rejected" ? rejectionReason(verdict) : null,
  };
}

/** What the agent (and so its model) is told about a call policy refused. */
function rejectionReason(verdict: PolicyVerdict): string {
  if (verdict.outcome === "blocked") {
    const reason = verdict.rule?.reason?.trim();
    const why = reason ? `: ${reason}${/[.!?]$/.test(reason) ? "" : "."}` : ".";
    return `Blocked by policy rule '${verdict.rule!.name}'${why} Do not retry this call.`;
  }
  return "Not approved: this agent's mode is deny, so calls that need a reviewer are rejected.";
}

/** The remembered approvals (by action hash) that settle calls of this batch at creation. */
async function rememberedApprovalsFor(
  tx: Transaction,
  agent: AgentActor,
  run: Pick<Run, "id" | "conversationId">,
  queue: Queue,
  hashes: string[],
) {
  const inRun = and(eq(rememberedApprovals.scope, "run"), eq(rememberedApprovals.scopeKey, run.id));
  const inConversation = run.conversationId
    ? and(
        eq(rememberedApprovals.scope, "conversation"),
        eq(rememberedApprovals.scopeKey, run.conversationId),
      )
    : undefined;
  const rows = await tx
    .select({
      actionHash: rememberedApprovals.actionHash,
      approvedBy: rememberedApprovals.approvedBy,
      scope: rememberedApprovals.scope,
    })
    .from(rememberedApprovals)
    .where(
      and(
        eq(rememberedApprovals.agentKeyId, agent.id),
        eq(rememberedApprovals.queueId, queue.id),
        inArray(rememberedApprovals.actionHash, hashes),
        inConversation ? or(inRun, inConversation) : inRun,
      ),
    );
  return new Map(rows.map((row) => [row.actionHash, row]));
}
