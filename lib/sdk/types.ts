// The API's resources and request bodies, written by hand to mirror lib/api/resource-schemas.ts
// and the verbs' zod inputs: the SDK imports nothing from the server, so it runs anywhere.

export type Ref = { id: string; name: string };

export type RunStatus =
  "running" | "waiting_approval" | "ready" | "resuming" | "completed" | "failed" | "cancelled";
export type BatchKind = "action" | "plan";
export type BatchStatus = "pending" | "decided" | "expired" | "cancelled";
export type BatchOutcome = "approved" | "rejected" | "mixed";
export type CallStatus = "pending" | "approved" | "rejected" | "expired" | "cancelled";
export type DecisionSource = "reviewer" | "policy" | "memory" | "timeout";
export type RememberScope = "once" | "run" | "conversation";
export type TimeoutAction = "reject" | "approve" | "escalate";
export type AgentMode = "ask" | "allow" | "deny" | "off";
export type PolicyEffect = "allow" | "ask" | "deny";

export type Vote = {
  reviewer: Ref;
  outcome: "approved" | "rejected";
  revision: number;
  actionHash: string;
  at: string;
};

export type Decision = {
  outcome: "approved" | "rejected";
  source: DecisionSource;
  by: Ref | null;
  at: string;
  reason: string | null;
  /** when a reviewer edited the call: the args the agent must run instead of `args` */
  editedArgs: unknown;
  scope: RememberScope | null;
  /** when `source` is `policy`: what decided it */
  policy: {
    effect: PolicyEffect;
    rule: { id: string; name: string; queueId: string | null } | null;
    agentMode: AgentMode;
    /** a deny rule blocked the call: it never reached a reviewer and must not run */
    blocked: boolean;
  } | null;
};

export type Call = {
  id: string;
  batchId: string;
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  inputSchema: Record<string, unknown> | null;
  summary: string | null;
  risks: string[];
  costEstimate: number | null;
  /** ISO 4217 code of costEstimate (absent from older servers: USD) */
  costCurrency?: string;
  metadata: Record<string, unknown> | null;
  status: CallStatus;
  revision: number;
  actionHash: string;
  requiredApprovals: number;
  pendingEdit: unknown;
  votes: Vote[];
  decision: Decision | null;
};

export type Plan = {
  summary: string;
  rationale?: string;
  resources?: string[];
  risks?: string[];
  rollback?: string;
};

export type Batch = {
  id: string;
  runId: string;
  kind: BatchKind;
  status: BatchStatus;
  outcome: BatchOutcome | null;
  queue: Ref;
  agent: Ref;
  plan: Plan | null;
  calls: Call[];
  createdAt: string;
  expiresAt: string;
  onTimeout: TimeoutAction;
  escalations: number;
  routing: { ruleId: string; name: string } | null;
  decidedAt: string | null;
  cancelReason: string | null;
  reviewUrl: string;
  claim: { by: Ref; expiresAt: string; locked: boolean } | null;
};

export type Run = {
  id: string;
  agent: Ref;
  externalId: string | null;
  conversationId: string | null;
  status: RunStatus;
  metadata: Record<string, unknown> | null;
  claim: { workerId: string; leaseExpiresAt: string } | null;
  rollbackRequestedAt: string | null;
  requirePlanApproval: boolean;
  result: unknown;
  error: unknown;
  createdAt: string;
  updatedAt: string;
  batches?: Batch[];
};

/** One row of the event log, as streams and `POST /runs/{id}/events` show it. */
export type RunEvent = {
  seq: number;
  type: string;
  at: string;
  runId: string | null;
  batchId: string | null;
  callId: string | null;
  queueId: string | null;
  actor: { kind: "reviewer" | "agent" | "system"; id: string | null; name: string | null };
  data: Record<string, unknown>;
};

/** A reported action that carries `revert` data, handed to the claimer after a rollback request. */
export type RollbackAction = {
  toolCallId: string;
  revert: unknown;
  result: unknown;
  reportedAt: string;
  seq: number;
};

/** `POST /runs/{id}/claim`'s answer. */
export type ClaimGrant = {
  claimToken: string;
  leaseExpiresAt: string;
  run: Run;
  checkpoint: unknown;
  /** the run's latest batch, settled: what the worker resumes with */
  batch: Batch | null;
  /** null unless a rollback was requested: then the actions to revert, newest first */
  rollback: RollbackAction[] | null;
};

// Request bodies.

export type CallInput = {
  toolCallId: string;
  toolName: string;
  args: Record<string, unknown>;
  inputSchema?: Record<string, unknown>;
  summary?: string;
  risks?: string[];
  costEstimate?: number;
  /** ISO 4217 code of costEstimate, e.g. "EUR" (default USD): reviewers see the cost in it */
  costCurrency?: string;
  metadata?: Record<string, unknown>;
};

export type BatchInput = {
  kind?: BatchKind;
  calls?: CallInput[];
  plan?: Plan;
  /** a queue id or name the agent key may target; its default queue otherwise */
  queue?: string;
  timeoutSecs?: number;
  onTimeout?: TimeoutAction;
  checkpoint?: unknown;
  callbackUrl?: string;
  /** set by `Claim.pause`; pass it yourself only when pausing with a raw token */
  claimToken?: string;
};

export type CreateRunInput = {
  externalId?: string;
  conversationId?: string;
  metadata?: Record<string, unknown>;
  /** refuse action batches (409 plan_required) until a plan batch of the run is approved */
  requirePlanApproval?: boolean;
  /** the run's first pause, created in the same request */
  batch?: BatchInput;
};
