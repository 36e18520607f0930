import { and, eq, isNull, or, sql } from "drizzle-orm";
import { preparedRead, readTogether, type PreparedRead, type RowsOf } from "@/db/prepared-read";
import {
  batches,
  calls,
  idempotencyKeys,
  policyRules,
  queues,
  rememberedApprovals,
  routingRules,
  runs,
  users,
  type Batch,
  type Call,
  type CallStatus,
  type PolicyRule,
  type Queue,
  type RoutingRule,
  type Run,
} from "@/db/schema";
import { changedRow, guard, insertRows, type Statement } from "@/db/write-batch";
import { actionHash } from "@/lib/batches/action-hash";
import type { Idempotency } from "@/lib/input/idempotency";
import { actorRef, type AgentActor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import {
  assembleBatchViews,
  forReviewers,
  type BatchView,
  type BatchViewRows,
} from "@/lib/read-models/batch-run-views";
import { newId } from "@/lib/ids";
import { evaluateCall, policyDecision, type PolicyVerdict } from "@/lib/policies/evaluate-policy";
import { chooseRule } from "@/lib/routing/match-rule";
import type { CallInput, CreateBatchInput } from "./batch-input";
import { planSettlement } from "./settle-batch";
import { checkTimeoutApproval, timeoutApprovalGuard } from "./timeout-approval";

/**
 * Everything a pause decides from, read before it writes, in one read batch (one round trip):
 * the run it pauses (for POST /runs/{id}/batches), an earlier answer to the same Idempotency-Key,
 * the routing rules, the queues the batch could go to, the policy rules of those queues, and the
 * remembered approvals of this agent that could settle its calls.
 */
export type PauseContext = {
  run: Run | null;
  /** whether the run already has an approved plan (for requirePlanApproval) */
  planApproved: boolean;
  earlier: { requestHash: string; resourceId: string } | null;
  routingRules: RoutingRule[];
  queues: Queue[];
  policyRules: PolicyRule[];
  memories: Memory[];
};

type Memory = {
  actionHash: string;
  approvedBy: string | null;
  approverName: string | null;
  approverEmail: string | null;
  scope: "run" | "conversation";
  queueId: string;
};

type PauseRequest = {
  runId?: string;
  conversationId?: string | null;
  idempotency: Idempotency | null;
  batch?: CreateBatchInput;
};

export async function readPauseContext(
  agent: AgentActor,
  request: PauseRequest,
): Promise<PauseContext> {
  const rows = await readTogether(pauseReadsFor(request), pauseValues(agent, request));
  return pauseContextOf(rows, request);
}

/**
 * The pause's reads, and more of the caller's in the same read batch (one round trip): `more`
 * are prepared reads whose placeholders are filled from the pause's values and `values`.
 */
export async function readPauseContextWith<const More extends readonly PreparedRead[]>(
  agent: AgentActor,
  request: PauseRequest,
  more: More,
  values: Record<string, unknown>,
): Promise<[PauseContext, { -readonly [K in keyof More]: RowsOf<More[K]> }]> {
  const reads = pauseReadsFor(request);
  const rows = await readTogether([...reads, ...more] as const, {
    ...pauseValues(agent, request),
    ...values,
  });
  const pause = rows.slice(0, reads.length) as unknown as Awaited<
    ReturnType<typeof readTogether<ReturnType<typeof pauseReads>>>
  >;
  return [
    pauseContextOf(pause, request),
    rows.slice(reads.length) as unknown as { -readonly [K in keyof More]: RowsOf<More[K]> },
  ];
}

/**
 * The pause's reads for this request. Reads whose key is absent find nothing, and are not sent
 * (null): a new run has no row, plan or remembered approval of its own (only its conversation's),
 * a request without a key no earlier answer. Over a libSQL server each read costs it a statement.
 */
function pauseReadsFor({ runId, idempotency, batch, conversationId }: PauseRequest) {
  const [runRead, planRead, earlierRead, ruleRead, queueRead, policyRead, memoryRead] =
    pauseReads();
  const existingRun = runId !== undefined;
  const hasCalls = batch ? batchCallsOf(batch).length > 0 : false;
  const mayRemember = hasCalls && (existingRun || conversationId != null);
  return [
    existingRun ? runRead : null,
    existingRun ? planRead : null,
    idempotency ? earlierRead : null,
    ruleRead,
    queueRead,
    policyRead,
    mayRemember ? memoryRead : null,
  ] as const;
}

function pauseValues(agent: AgentActor, request: PauseRequest): Record<string, unknown> {
  const { runId, idempotency, batch } = request;
  const hashes = batch
    ? batchCallsOf(batch).map((call) => actionHash(call.toolName, call.args))
    : [];
  return {
    agentId: agent.id,
    runId: runId ?? null,
    conversationId: request.conversationId ?? null,
    scope: idempotency?.scope ?? null,
    key: idempotency?.key ?? null,
    queueIds: JSON.stringify(agent.queueIds),
    requested: batch?.queue ?? null,
    hashes: JSON.stringify(hashes),
  };
}

function pauseContextOf(
  [runRows, planRows, earlierRows, ruleRows, queueRows, policyRows, memoryRows]: Awaited<
    ReturnType<typeof readTogether<ReturnType<typeof pauseReads>>>
  >,
  { idempotency }: PauseRequest,
): PauseContext {
  return {
    run: runRows[0] ?? null,
    planApproved: planRows.length > 0,
    earlier: idempotency ? (earlierRows[0] ?? null) : null,
    routingRules: ruleRows,
    queues: queueRows,
    policyRules: policyRows,
    memories: memoryRows,
  };
}

// The reads of a pause, prepared once (db/prepared-read.ts). Lists go in as JSON arrays
// (json_each), so the SQL is the same whatever their length.
const pauseReads = preparedRead((db) => {
  const agentId = sql.placeholder("agentId");
  const runId = sql.placeholder("runId");
  const inJson = (name: string) => sql`(select value from json_each(${sql.placeholder(name)}))`;
  // The queues a batch can reach: the key's own, any a routing rule names, or one named by the batch.
  const reachable = or(
    sql`${queues.id} in ${inJson("queueIds")}`,
    sql`${queues.id} in (select ${routingRules.queueId} from ${routingRules} where ${routingRules.enabled} = 1)`,
    eq(queues.id, sql.placeholder("requested")),
    eq(queues.name, sql.placeholder("requested")),
  );
  // a run's conversation: the paused run's, or the one a new run names
  const conversation = sql`coalesce((select ${runs.conversationId} from ${runs} where ${runs.id} = ${runId}), ${sql.placeholder("conversationId")})`;
  return [
    db.select().from(runs).where(eq(runs.id, runId)).prepare(),
    db
      .select({ id: batches.id })
      .from(batches)
      .where(
        and(eq(batches.runId, runId), eq(batches.kind, "plan"), eq(batches.outcome, "approved")),
      )
      .limit(1)
      .prepare(),
    db
      .select({ requestHash: idempotencyKeys.requestHash, resourceId: idempotencyKeys.resourceId })
      .from(idempotencyKeys)
      .where(
        and(
          eq(idempotencyKeys.agentKeyId, agentId),
          eq(idempotencyKeys.scope, sql.placeholder("scope")),
          eq(idempotencyKeys.key, sql.placeholder("key")),
        ),
      )
      .prepare(),
    db.select().from(routingRules).where(eq(routingRules.enabled, true)).prepare(),
    db.select().from(queues).where(reachable).prepare(),
    db
      .select()
      .from(policyRules)
      .where(
        and(
          eq(policyRules.enabled, true),
          or(
            isNull(policyRules.queueId),
            sql`${policyRules.queueId} in (select ${queues.id} from ${queues} where ${reachable})`,
          ),
        ),
      )
      .prepare(),
    db
      .select({
        actionHash: rememberedApprovals.actionHash,
        approvedBy: rememberedApprovals.approvedBy,
        approverName: users.name,
        approverEmail: users.email,
        scope: rememberedApprovals.scope,
        queueId: rememberedApprovals.queueId,
      })
      .from(rememberedApprovals)
      .leftJoin(users, eq(users.id, rememberedApprovals.approvedBy))
      .where(
        and(
          eq(rememberedApprovals.agentKeyId, agentId),
          sql`${rememberedApprovals.actionHash} in ${inJson("hashes")}`,
          or(
            and(eq(rememberedApprovals.scope, "run"), eq(rememberedApprovals.scopeKey, runId)),
            and(
              eq(rememberedApprovals.scope, "conversation"),
              sql`${rememberedApprovals.scopeKey} = ${conversation}`,
            ),
          ),
        ),
      )
      .prepare(),
  ] as const;
});

export type QueueChoice = { queue: Queue; rule: RoutingRule | null };

/**
 * The queue a batch goes to: the one named, if the key may target it; else the first routing
 * rule that matches the batch (among those whose queue still takes batches); else the key's
 * default queue.
 */
export function chooseQueue(
  agent: AgentActor,
  context: PauseContext,
  batch: Pick<CreateBatchInput, "queue" | "calls"> | undefined,
): QueueChoice {
  const requested = batch?.queue;
  const byId = new Map(context.queues.map((queue) => [queue.id, queue]));
  if (requested === undefined) {
    const open = context.routingRules.filter((rule) => byId.get(rule.queueId)?.archivedAt === null);
    const rule = batch ? chooseRule(open, { agentKeyId: agent.id, calls: batch.calls }) : null;
    const queue = byId.get(rule?.queueId ?? agent.defaultQueueId)!;
    if (queue.archivedAt !== null) {
      throw new ConflictError(
        "queue_archived",
        `This agent key's default queue '${queue.name}' is archived; name another queue it may target, or ask an admin for a new key.`,
        null,
      );
    }
    return { queue, rule };
  }
  const queue =
    context.queues.find((q) => q.id === requested) ??
    context.queues.find((q) => q.name === requested);
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

/** The writes that record an Idempotency-Key's first answer; a concurrent twin aborts the batch. */
export function idempotencyRecord(
  agent: AgentActor,
  idempotency: Idempotency | null,
  resourceId: string,
  now: number,
): Statement[] {
  if (!idempotency) return [];
  return [
    insertRows(
      idempotencyKeys,
      [
        {
          agentKeyId: agent.id,
          scope: idempotency.scope,
          key: idempotency.key,
          requestHash: idempotency.requestHash,
          resourceId,
          createdAt: now,
        },
      ],
      " on conflict do nothing",
    ),
    changedRow(),
  ];
}

const batchCallsOf = (input: CreateBatchInput): CallInput[] =>
  input.calls.length > 0 ? input.calls : [planAsCall(input.plan!)];

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
  | {
      kind: "memory";
      approvedBy: string | null;
      approverName: string | null;
      approverEmail: string | null;
      scope: "run" | "conversation";
    }
  | { kind: "policy"; outcome: "approved" | "rejected"; verdict: PolicyVerdict };

/**
 * Plans a pending batch and its calls for `run` (whose own write the caller plans), settling at
 * once the calls that policy or a remembered approval decides, with their events. Returns the
 * writes and the batch as its agent sees it after them.
 *
 * Order per call: the agent's mode `off` approves; a deny rule blocks; an allow rule (or mode
 * `allow`) approves; a remembered approval approves; mode `deny` rejects; else a reviewer decides.
 */
export function planOpenBatch(
  agent: AgentActor,
  run: Pick<Run, "id" | "conversationId">,
  { queue, rule }: QueueChoice,
  context: PauseContext,
  input: CreateBatchInput,
  now: number,
  /** a call of an MCP gateway (lib/gated-calls): its decision is used once, at creation when settled */
  gateway: string | null = null,
): { writes: Statement[]; view: BatchView } {
  checkTimeoutApproval(queue, input);
  const batchId = newId();
  const batchCalls = batchCallsOf(input);
  const hashes = batchCalls.map((call) => actionHash(call.toolName, call.args));
  const mode = agent.mode;
  // Rules judge tool calls; a plan meets only the agent's mode.
  const rules =
    input.kind === "plan"
      ? []
      : context.policyRules.filter((r) => r.queueId === null || r.queueId === queue.id);
  const memories = new Map(
    context.memories.filter((m) => m.queueId === queue.id).map((m) => [m.actionHash, m]),
  );
  const settlements = batchCalls.map((call, position): Settlement => {
    const verdict = evaluateCall(rules, call, { agentKeyId: agent.id, agentMode: mode });
    if (verdict.outcome === "approved" || verdict.outcome === "blocked")
      return {
        kind: "policy",
        outcome: verdict.outcome === "approved" ? "approved" : "rejected",
        verdict,
      };
    const memory = memories.get(hashes[position]!);
    if (memory)
      return {
        kind: "memory",
        approvedBy: memory.approvedBy,
        approverName: memory.approverName,
        approverEmail: memory.approverEmail,
        scope: memory.scope,
      };
    if (verdict.outcome === "rejected") return { kind: "policy", outcome: "rejected", verdict };
    return { kind: "review" };
  });
  const blocked = (s: Settlement) => s.kind === "policy" && s.verdict.outcome === "blocked";
  // Reviewers' events never carry a blocked call: their view leaves it out, and the block itself
  // is logged for the run only (queueId null reaches no reviewer stream, live or replayed).
  const hidden = settlements.every(blocked);

  const batch: Batch = {
    id: batchId,
    runId: run.id,
    queueId: queue.id,
    kind: input.kind,
    status: "pending",
    outcome: null,
    plan: input.plan ?? null,
    onTimeout: input.onTimeout,
    callbackUrl: input.callbackUrl ?? null,
    cancelReason: null,
    createdAt: now,
    expiresAt: now + (input.timeoutSecs ?? queue.defaultTimeoutSecs) * 1000,
    decidedAt: null,
    escalations: 0,
    routingRuleId: rule?.id ?? null,
    hiddenFromReviewers: hidden,
  };
  const rows: Call[] = batchCalls.map((call, position) => ({
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
    costCurrency: call.costCurrency ?? "USD",
    metadata: call.metadata ?? null,
    status: "pending",
    revision: 1,
    actionHash: hashes[position]!,
    requiredApprovals: queue.requiredApprovals,
    editedArgs: null,
    decisionOutcome: null,
    decisionSource: null,
    decidedBy: null,
    decidedByName: null,
    decidedByEmail: null,
    decidedAt: null,
    decisionReason: null,
    decisionScope: null,
    decisionPolicy: null,
    gateway,
    usedAt: gateway !== null && settlements[position]!.kind !== "review" ? now : null,
    reportedAt: null,
    ...settledFields(settlements[position]!, now),
  }));
  const viewRows: BatchViewRows = {
    batchRows: [
      {
        batch,
        queueName: queue.name,
        agentId: agent.id,
        agentName: agent.name,
        ruleName: rule?.name ?? null,
        claimMode: queue.claimMode,
        claimUserId: null,
        claimExpiresAt: null,
        claimantName: null,
        // a batch just created has been set aside by nobody
        setAsides: [],
      },
    ],
    callRows: rows.map((call, position) => {
      const settlement = settlements[position]!;
      return { call, deciderName: settlement.kind === "memory" ? settlement.approverName : null };
    }),
    voteRows: [],
  };
  const agentView = assembleBatchViews(viewRows, [batchId], "agent")[0]!;

  const writes: Statement[] = [
    // The queue still takes batches when the pause lands (it was read before).
    guard("exists (select 1 from queues where id = ? and archived_at is null)", queue.id),
    ...timeoutApprovalGuard(queue, input),
    insertRows(batches, [batch]),
    insertRows(calls, rows),
    eventRows(
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
    ),
  ];
  if (settlements.some((s) => s.kind !== "review")) {
    // planSettlement edits viewRows to show the batch settled when no call is left pending.
    writes.push(...planSettlement(viewRows, SYSTEM_ACTOR, now));
  }
  return { writes, view: assembleBatchViews(viewRows, [batchId], "agent")[0]! };
}

function settledFields(settlement: Settlement, now: number) {
  if (settlement.kind === "review") return {};
  if (settlement.kind === "memory") {
    return {
      status: "approved" as CallStatus,
      decisionOutcome: "approved" as const,
      decisionSource: "memory" as const,
      decidedBy: settlement.approvedBy,
      decidedByName: settlement.approverName,
      decidedByEmail: settlement.approverEmail,
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
