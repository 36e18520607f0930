// The API's JSON shapes as the card receives them (mirrors lib/read-models/resource-schemas.ts; a
// compile-time test keeps the two in step). Defined here, not imported, so the folder ships alone.

export type Ref = { id: string; name: string };

export type CallStatus = "pending" | "approved" | "rejected" | "expired" | "cancelled";
export type BatchStatus = "pending" | "decided" | "expired" | "cancelled";
export type BatchOutcome = "approved" | "rejected" | "mixed";
export type BatchKind = "action" | "plan";
export type TimeoutAction = "reject" | "approve" | "escalate";
export type DecisionSource = "reviewer" | "policy" | "memory" | "timeout";
export type RememberScope = "once" | "run" | "conversation";

export type Vote = {
  reviewer: Ref;
  outcome: "approved" | "rejected";
  revision: number;
  actionHash?: string;
  at: string;
};

export type Decision = {
  outcome: "approved" | "rejected";
  source: DecisionSource;
  by: Ref | null;
  at: string;
  reason: string | null;
  /** when approved with an edit: the args the agent must run (an object), else null */
  editedArgs: unknown;
  scope: RememberScope | null;
  /** when a policy decided (source `policy`): the rule, as it was then, or the agent's mode */
  policy?: PolicyDecision | null;
};

export type PolicyDecision = {
  effect: "allow" | "ask" | "deny";
  rule: { id: string; name: string; queueId: string | null } | null;
  agentMode: "ask" | "allow" | "deny" | "off";
  /** a deny rule blocked the call: it never reached a reviewer */
  blocked: boolean;
};

export type Plan = {
  summary: string;
  rationale?: string;
  resources?: string[];
  risks?: string[];
  rollback?: string;
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
  /** in costCurrency */
  costEstimate: number | null;
  /** ISO 4217 code of costEstimate (absent from older servers: USD) */
  costCurrency?: string;
  metadata: Record<string, unknown> | null;
  status: CallStatus;
  revision: number;
  actionHash: string;
  requiredApprovals: number;
  /** a reviewer's edit (an object) awaiting the rest of the quorum, else null */
  pendingEdit: unknown;
  votes: Vote[];
  decision: Decision | null;
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
  /** times the batch moved to an escalation queue (absent from older servers) */
  escalations?: number;
  /** the routing rule that chose the queue, if one did (absent from older servers) */
  routing?: { ruleId: string; name: string } | null;
  decidedAt: string | null;
  cancelReason: string | null;
  reviewUrl: string;
  /** a reviewer's live "I'm reviewing this" claim (absent from older servers) */
  claim?: ReviewClaim | null;
  /** reviewers who set it aside ("Not now") and have not seen it back yet (absent from older servers) */
  setAside?: SetAsideMark[];
};

export type SetAsideMark = {
  by: Ref;
  /** when they set it aside */
  at: string;
  /** the time they chose */
  until: string;
  /** when it comes back to them: `until`, or sooner as its deadline nears */
  returnsAt: string;
};

export type ReviewClaim = {
  by: Ref;
  expiresAt: string;
  /** the queue lets only the claimant decide while the claim lasts */
  locked: boolean;
};

export type DecisionRequest =
  | { callId: string; outcome: "approve"; expectedRevision: number; scope: RememberScope }
  | { callId: string; outcome: "reject"; expectedRevision: number; reason: string }
  | {
      callId: string;
      outcome: "edit";
      expectedRevision: number;
      editedArgs: Record<string, unknown>;
      scope: RememberScope;
    };

export type BatchDecisionRequest = {
  batchId: string;
  outcome: "approve" | "reject";
  expectedRevisions: Record<string, number>;
  reason?: string;
};

/**
 * What the host tells the card about a decision it attempted. `code` is the API error code
 * (already_decided, stale_revision, not_pending, invalid_request, forbidden, …). `current` may be
 * the batch, or the call as `POST /calls/{id}/decision` returns it in a 409: the card merges it.
 */
export type DecisionResult =
  { ok: true; batch: Batch } | { ok: false; code: string; message: string; current?: Batch | Call };

export type ApprovalIntent = {
  batchId: string;
  callId: string;
  /** the tool name as the card's buttons name it ("refund_order #2") */
  label: string;
  request: Extract<DecisionRequest, { outcome: "approve" }>;
};

export type ReviewCardHandle = {
  /** approves the focused (else the first) pending call, with its chosen remember scope */
  approve(): void;
  /**
   * what `approve()` would send now (the call, the revision shown, its scope, its label), without
   * sending it, or null when nothing is open: a host that holds a keyed approval back for an
   * undo window sends this later through its own `onDecide`
   */
  nextApproval(): ApprovalIntent | null;
  /** opens the reason field of the focused (else the first) pending call and focuses it */
  reject(): void;
  /** opens the args editor of the focused (else the first) pending call */
  edit(): void;
  focus(): void;
};

export type Viewer = { id: string; name: string };
