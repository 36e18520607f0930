import { and, eq, inArray, isNull, or } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import {
  batches,
  calls,
  queues,
  rememberedApprovals,
  routingRules,
  type Queue,
  type RoutingRule,
  type Run,
} from "@/db/schema";
import { actionHash } from "@/lib/approvals/action-hash";
import { actorRef, type AgentActor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { appendEvents, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { loadBatchView, type BatchView } from "@/lib/api/views";
import { newId } from "@/lib/ids";
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

function planAsCall(plan: NonNullable<CreateBatchInput["plan"]>): CallInput {
  return {
    toolCallId: "plan",
    toolName: "plan",
    args: plan,
    summary: plan.summary,
    risks: plan.risks,
  };
}

/**
 * Inserts a pending batch and its calls for `run` (whose status the caller has already moved),
 * settles at once the calls a reviewer asked to remember, and appends the events. Returns the
 * batch's view as it stands after that.
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
    createdAt: now,
    expiresAt: now + (input.timeoutSecs ?? queue.defaultTimeoutSecs) * 1000,
  });

  const hashes = batchCalls.map((call) => actionHash(call.toolName, call.args));
  const memories = await rememberedApprovalsFor(tx, agent, run, queue, hashes);
  const rows = batchCalls.map((call, position) => {
    const memory = memories.get(hashes[position]!);
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
      status: memory ? ("approved" as const) : ("pending" as const),
      actionHash: hashes[position]!,
      requiredApprovals: queue.requiredApprovals,
      ...(memory && {
        decisionOutcome: "approved" as const,
        decisionSource: "memory" as const,
        decidedBy: memory.approvedBy,
        decidedAt: now,
        decisionScope: memory.scope,
      }),
    };
  });
  await tx.insert(calls).values(rows);

  const view = (await loadBatchView(tx, batchId))!;
  const remembered = rows.filter((row) => row.decisionSource === "memory");
  await appendEvents(tx, [
    {
      type: "batch.created",
      runId: run.id,
      batchId,
      queueId: queue.id,
      actor: actorRef(agent),
      data: { batch: view },
      at: now,
    },
    ...remembered.map((row) => ({
      type: "call.decided",
      runId: run.id,
      batchId,
      callId: row.id,
      queueId: queue.id,
      actor: SYSTEM_ACTOR,
      data: { outcome: "approved", source: "memory", scope: row.decisionScope },
      at: now,
    })),
  ]);
  if (remembered.length === 0) return view;
  return (
    (await settleBatchIfDone(tx, batchId, SYSTEM_ACTOR)) ?? (await loadBatchView(tx, batchId))!
  );
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
