import { and, eq, or, sql } from "drizzle-orm";
import { preparedRead, readTogether, type PreparedRead, type RowsOf } from "@/db/prepared-read";
import {
  batches,
  calls,
  idempotencyKeys,
  rememberedApprovals,
  runs,
  users,
  type Batch,
  type Call,
  type CallStatus,
  type Queue,
  type RoutingRule,
  type Run,
} from "@/db/schema";
import { changedRow, insertRows, type Statement } from "@/db/write-batch";
import { actionHash } from "@/lib/batches/action-hash";
import type { Idempotency } from "@/lib/input/idempotency";
import { actorRef, type AgentActor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { untilWrittenRecalling } from "@/lib/events/commit";
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
import {
  heldPauseSettings,
  pauseSettingsGuard,
  pauseSettingsOf,
  pauseSettingsReads,
  type PauseSettings,
  type PauseSettingsRows,
} from "./pause-settings";

/**
 * Everything a pause decides from: the run it pauses (for POST /runs/{id}/batches), an earlier
 * answer to the same Idempotency-Key, the remembered approvals of this agent that could settle
 * its calls — read before it writes, in one read batch (one round trip) — and the queues and
 * rules, from this process's copy when it holds one (pause-settings.ts): a pause on a new run
 * with that copy reads nothing at all before its write.
 */
export type PauseContext = {
  run: Run | null;
  /** whether the run already has an approved plan (for requirePlanApproval) */
  planApproved: boolean;
  earlier: { requestHash: string; resourceId: string } | null;
  /** the queues and rules; a pause planned from them writes `pauseSettingsGuard` with them */
  settings: PauseSettings;
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

/** What `pauseReads` answer, in their order. */
type PauseRows = [Run[], { id: string }[], NonNullable<PauseContext["earlier"]>[], Memory[]];

type PauseRequest = {
  runId?: string;
  conversationId?: string | null;
  idempotency: Idempotency | null;
  batch?: CreateBatchInput;
};

/**
 * How much a try of a pause reads (see `untilPaused`): `trusting`, it takes this process's copy
 * of the settings and, for a new run, takes its Idempotency-Key to be new (the key's record in
 * the write batch aborts it otherwise); a `full` read reads both.
 */
export type PauseRead = "trusting" | "full";

export async function readPauseContext(
  agent: AgentActor,
  request: PauseRequest,
  read: PauseRead,
): Promise<PauseContext> {
  const [context] = await readPauseContextWith(agent, request, read, [], {});
  return context;
}

/**
 * The pause's reads, and more of the caller's in the same read batch (one round trip): `more`
 * are prepared reads whose placeholders are filled from the pause's values and `values`.
 */
export async function readPauseContextWith<const More extends readonly PreparedRead[]>(
  agent: AgentActor,
  request: PauseRequest,
  read: PauseRead,
  more: More,
  values: Record<string, unknown>,
): Promise<[PauseContext, { -readonly [K in keyof More]: RowsOf<More[K]> }]> {
  const held = read === "trusting" ? heldPauseSettings(agent.queueIds) : null;
  const reads = pauseReadsFor(request, read);
  const settingsReads = held ? ([null, null, null, null] as const) : pauseSettingsReads();
  const rows = await readTogether([...reads, ...settingsReads, ...more] as const, {
    ...pauseValues(agent, request),
    ...values,
  });
  const [runRows, planRows, earlierRows, memoryRows] = rows as unknown as PauseRows;
  const settingsRows = rows.slice(reads.length, reads.length + settingsReads.length);
  const context: PauseContext = {
    run: runRows[0] ?? null,
    planApproved: planRows.length > 0,
    earlier: earlierRows[0] ?? null,
    settings: held ?? pauseSettingsOf(settingsRows as PauseSettingsRows),
    memories: memoryRows,
  };
  return [
    context,
    rows.slice(reads.length + settingsReads.length) as unknown as {
      -readonly [K in keyof More]: RowsOf<More[K]>;
    },
  ];
}

/**
 * The pause's own reads for this request. Reads whose key is absent find nothing, and are not
 * sent (null): a new run has no row, plan or remembered approval of its own (only its
 * conversation's), a request without a key no earlier answer. Over a libSQL server each read
 * costs it a statement.
 */
function pauseReadsFor(
  { runId, idempotency, batch, conversationId }: PauseRequest,
  read: PauseRead,
) {
  const [runRead, planRead, earlierRead, memoryRead] = pauseReads();
  const existingRun = runId !== undefined;
  const hasCalls = batch ? batchCallsOf(batch).length > 0 : false;
  const mayRemember = hasCalls && (existingRun || conversationId != null);
  // A pause on a run already read for anyway asks for its key in the same round trip.
  const readKey = idempotency !== null && (read === "full" || existingRun);
  return [
    existingRun ? runRead : null,
    existingRun ? planRead : null,
    readKey ? earlierRead : null,
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
    hashes: JSON.stringify(hashes),
  };
}

// The reads of a pause, prepared once (db/prepared-read.ts). Lists go in as JSON arrays
// (json_each), so the SQL is the same whatever their length.
const pauseReads = preparedRead((db) => {
  const agentId = sql.placeholder("agentId");
  const runId = sql.placeholder("runId");
  const inJson = (name: string) => sql`(select value from json_each(${sql.placeholder(name)}))`;
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

/**
 * Runs a pause until it is written, as `untilWritten` does, with a trusting read on its first
 * try (see `PauseRead`): the write batch's guards make that safe. Any other answer than the
 * write — a refusal (4xx), or a guard that found the settings changed or the key already used —
 * is given only from a full read, on the next try: a copy one change behind can delay a pause by
 * a round trip, never refuse or misroute it.
 */
export function untilPaused<T>(pause: (read: PauseRead) => Promise<T>): Promise<T> {
  return untilWrittenRecalling(
    () => "trusting" as const,
    (trusting) => pause(trusting ?? "full"),
  );
}

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
  const { queues: allQueues, queueById: byId, routingRules: rules } = context.settings;
  if (requested === undefined) {
    const open = rules.filter((rule) => byId.get(rule.queueId)?.archivedAt === null);
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
    allQueues.find((q) => q.id === requested) ?? allQueues.find((q) => q.name === requested);
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
 * writes, the batch as its agent sees it after them, and the rows that view is made of.
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
): { writes: Statement[]; view: BatchView; rows: BatchViewRows } {
  checkTimeoutApproval(queue, input);
  const batchId = newId();
  const batchCalls = batchCallsOf(input);
  const hashes = batchCalls.map((call) => actionHash(call.toolName, call.args));
  const mode = agent.mode;
  // Rules judge tool calls; a plan meets only the agent's mode.
  const rules =
    input.kind === "plan"
      ? []
      : context.settings.policyRules.filter((r) => r.queueId === null || r.queueId === queue.id);
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
    // The queues and rules it was planned from are still the database's (so the queue still
    // takes batches).
    pauseSettingsGuard(context.settings),
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
  return { writes, view: assembleBatchViews(viewRows, [batchId], "agent")[0]!, rows: viewRows };
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
