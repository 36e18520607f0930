import { z } from "zod";
import { ERROR_CODES } from "@/lib/errors";
import {
  ACTOR_KINDS,
  AGENT_MODES,
  BATCH_KINDS,
  BATCH_OUTCOMES,
  BATCH_STATUSES,
  CALL_STATUSES,
  DECISION_SOURCES,
  NOTIFICATION_DELIVERIES,
  POLICY_EFFECTS,
  PREDICATE_OPS,
  QUEUE_ROLES,
  REMEMBER_SCOPES,
  RUN_STATUSES,
  TIMEOUT_ACTIONS,
} from "@/db/schema";

// The shapes of API responses, for the OpenAPI document (lib/read-models/batch-run-views.ts builds them).

const Time = z.iso.datetime();
const Ref = z.object({ id: z.string(), name: z.string() });
/** A reviewer who voted or decided, named as they were at that moment (a rename changes no record). */
const DeciderRef = Ref.extend({
  email: z.string().nullable().optional().describe("only in history exports"),
});

export const VoteResource = z
  .object({
    reviewer: DeciderRef,
    outcome: z.enum(["approved", "rejected"]),
    revision: z.int(),
    actionHash: z.string().describe("the hash of the exact action this vote approved or rejected"),
    at: Time,
  })
  .meta({ id: "Vote" });

export const DecisionResource = z
  .object({
    outcome: z.enum(["approved", "rejected"]),
    source: z.enum(DECISION_SOURCES),
    by: DeciderRef.nullable(),
    at: Time,
    reason: z.string().nullable(),
    editedArgs: z.unknown().describe("when approved with an edit: the args the agent must run"),
    scope: z.enum(REMEMBER_SCOPES).nullable(),
    policy: z
      .object({
        effect: z.enum(POLICY_EFFECTS),
        rule: z
          .object({ id: z.string(), name: z.string(), queueId: z.string().nullable() })
          .nullable()
          .describe("the rule that decided, as it was then; null when the agent's mode decided"),
        agentMode: z.enum(AGENT_MODES),
        blocked: z
          .boolean()
          .describe("a deny rule blocked the call: it never reached a reviewer and must not run"),
      })
      .nullable()
      .describe("when source is policy: what decided it"),
  })
  .meta({ id: "Decision" });

export const CallResource = z
  .object({
    id: z.string(),
    batchId: z.string(),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.record(z.string(), z.unknown()),
    inputSchema: z.record(z.string(), z.unknown()).nullable(),
    summary: z.string().nullable(),
    risks: z.array(z.string()),
    costEstimate: z.number().nullable(),
    costCurrency: z
      .string()
      .describe("the ISO 4217 currency of costEstimate, as the agent stated it (default USD)"),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    status: z.enum(CALL_STATUSES),
    revision: z.int(),
    actionHash: z
      .string()
      .describe(
        "SHA-256 of the tool name and the RFC 8785 canonical JSON of the args under review",
      ),
    requiredApprovals: z.int(),
    pendingEdit: z
      .unknown()
      .describe("a reviewer's edit awaiting the rest of the quorum, else null"),
    votes: z.array(VoteResource),
    decision: DecisionResource.nullable(),
  })
  .meta({ id: "Call" });

export const PlanResource = z
  .object({
    summary: z.string(),
    rationale: z.string().optional(),
    resources: z.array(z.string()).optional(),
    risks: z.array(z.string()).optional(),
    rollback: z.string().optional(),
  })
  .meta({ id: "Plan" });

export const BatchResource = z
  .object({
    id: z.string(),
    runId: z.string(),
    kind: z.enum(BATCH_KINDS),
    status: z.enum(BATCH_STATUSES),
    outcome: z.enum(BATCH_OUTCOMES).nullable(),
    queue: Ref,
    agent: Ref,
    plan: PlanResource.nullable(),
    calls: z.array(CallResource),
    createdAt: Time,
    expiresAt: Time,
    onTimeout: z.enum(TIMEOUT_ACTIONS),
    escalations: z.int().describe("how many times the batch moved to an escalation queue"),
    routing: z
      .object({ ruleId: z.string(), name: z.string() })
      .nullable()
      .describe("the routing rule that chose the queue; null when named or by default"),
    decidedAt: Time.nullable(),
    cancelReason: z.string().nullable(),
    reviewUrl: z.string(),
    claim: z
      .object({
        by: Ref,
        expiresAt: Time,
        locked: z
          .boolean()
          .describe("the queue lets only the claimant decide while the claim lasts"),
      })
      .nullable()
      .describe("a reviewer's live 'I'm reviewing this' claim on a pending batch, else null"),
    setAside: z
      .array(
        z.object({
          by: Ref,
          at: Time.describe("when they set it aside"),
          until: Time.describe("the time they chose"),
          returnsAt: Time.describe(
            "when it comes back to them: `until`, or sooner when the last fifth of the batch's time begins",
          ),
        }),
      )
      .describe(
        "reviewers who set this pending batch aside ('Not now') and have not seen it back yet, soonest back first: it is out of their own queue view until returnsAt; empty once settled",
      ),
  })
  .meta({ id: "Batch" });

export const RunResource = z
  .object({
    id: z.string(),
    agent: Ref,
    externalId: z.string().nullable(),
    conversationId: z.string().nullable(),
    status: z.enum(RUN_STATUSES),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    claim: z.object({ workerId: z.string(), leaseExpiresAt: Time }).nullable(),
    rollbackRequestedAt: Time.nullable(),
    requirePlanApproval: z
      .boolean()
      .describe("action batches are refused (409 plan_required) until a plan batch is approved"),
    result: z.unknown(),
    error: z.unknown(),
    createdAt: Time,
    updatedAt: Time,
    batches: z.array(BatchResource).optional(),
  })
  .meta({ id: "Run" });

export const EventResource = z
  .object({
    seq: z.int(),
    type: z.string(),
    at: Time,
    runId: z.string().nullable(),
    batchId: z.string().nullable(),
    callId: z.string().nullable(),
    queueId: z.string().nullable(),
    actor: z.object({
      kind: z.enum(ACTOR_KINDS),
      id: z.string().nullable(),
      name: z.string().nullable(),
    }),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "Event" });

export const QueueResource = z
  .object({
    id: z.string(),
    name: z.string(),
    requiredApprovals: z.int().describe("approvals from distinct reviewers that approve a call"),
    separationOfDuties: z.boolean().describe("an agent key's owner may not approve its calls"),
    defaultTimeoutSecs: z.int().describe("a batch's deadline when the agent names none"),
    approveOnTimeout: z
      .boolean()
      .describe(
        'whether agents may ask for onTimeout "approve" on batches of this queue (off: such a batch is refused with 400)',
      ),
    approveOnTimeoutMinSecs: z
      .int()
      .describe(
        'the shortest deadline (timeoutSecs) a batch with onTimeout "approve" may have here',
      ),
    slackChannelId: z
      .string()
      .nullable()
      .describe(
        "the Slack channel (id) this queue's cards are posted to, with Approve / Reject / Open buttons; null: not posted (the installation needs SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET)",
      ),
    escalationQueueId: z.string().nullable(),
    escalationQueue: Ref.nullable().describe("where batches with onTimeout escalate go"),
    claimMode: z
      .enum(["mark", "lock"])
      .describe(
        "a reviewer's 'I'm reviewing this' claim only marks the card (mark) or also locks its decisions to them (lock)",
      ),
    memberCount: z.int(),
    createdAt: Time,
    archivedAt: Time.nullable().describe("an archived queue takes no new batches"),
    access: z
      .object({
        role: z
          .enum(QUEUE_ROLES)
          .nullable()
          .describe("null: an installation admin who is not a member"),
        canManage: z.boolean().describe("may change its settings and members (a lead or an admin)"),
        isAdmin: z.boolean().describe("an installation admin: may grant admin and archive"),
      })
      .describe("what the caller may do with this queue"),
  })
  .meta({ id: "Queue" });

export const QueueMemberResource = z
  .object({
    userId: z.string(),
    name: z.string(),
    email: z.string(),
    role: z.enum(QUEUE_ROLES),
    addedAt: Time,
  })
  .meta({ id: "QueueMember" });

export const QueueDetailResource = QueueResource.extend({
  members: z.array(QueueMemberResource),
});

export const RoutingRuleResource = z
  .object({
    id: z.string(),
    name: z.string(),
    position: z.int().describe("rules are tried lowest first"),
    queue: Ref,
    agent: Ref.nullable(),
    toolPattern: z.string().nullable(),
    minCost: z.number().nullable(),
    enabled: z.boolean(),
    createdAt: Time,
  })
  .meta({ id: "RoutingRule" });

export const PolicyRuleResource = z
  .object({
    id: z.string(),
    name: z.string(),
    queue: Ref.nullable().describe("null: the rule applies in every queue"),
    effect: z.enum(POLICY_EFFECTS),
    agent: Ref.nullable(),
    toolPattern: z.string().nullable(),
    argPredicates: z.array(
      z.object({ path: z.string(), op: z.enum(PREDICATE_OPS), value: z.unknown() }),
    ),
    costAbove: z.number().nullable(),
    reason: z.string().nullable().describe("told to the agent when the rule blocks a call"),
    enabled: z.boolean(),
    position: z.int().describe("the rule's place in its list: the last tie-break of precedence"),
    specificity: z
      .int()
      .describe("conditions set; among rules of one effect the most specific decides"),
    conditions: z.string().describe("the conditions in words"),
    canEdit: z.boolean(),
    createdAt: Time,
    updatedAt: Time,
  })
  .meta({ id: "PolicyRule" });

const BacktestTally = {
  matched: z.int().describe("calls the rule would have decided (its effect wins for them)"),
  approved: z.int().describe("of those, approved by reviewers as asked"),
  edited: z.int().describe("approved with the arguments edited"),
  rejected: z.int(),
  expired: z.int().describe("left to the deadline: nobody decided"),
  overturned: z.int(),
};
const ArgPredicateResource = z.object({
  path: z.string(),
  op: z.enum(PREDICATE_OPS),
  value: z.unknown(),
});

export const PolicyBacktestResource = z
  .object({
    queue: Ref,
    period: z.object({ from: Time, to: Time }),
    effect: z.enum(POLICY_EFFECTS),
    conditions: z.string().describe("the rule's conditions in words"),
    calls: z.object(BacktestTally),
    notEvidence: z
      .object({ policy: z.int(), memory: z.int() })
      .describe("matched calls a policy or a remembered approval settled: no person judged them"),
    shadowed: z.int().describe("calls whose conditions hold but a stronger enabled rule takes"),
    cards: z.object({
      settled: z.int().describe("cards every waiting call of which the rule matches"),
      savedMs: z.int().describe("those cards' time to decision, summed: reviewer time saved"),
    }),
    overturned: z.object({
      count: z.int(),
      truncated: z.boolean().describe("more than the 500 listed"),
      decisions: z.array(
        z.object({
          callId: z.string(),
          batchId: z.string(),
          runId: z.string(),
          agent: Ref,
          toolName: z.string(),
          args: z.record(z.string(), z.unknown()),
          outcome: z.enum(["approved", "rejected"]),
          edited: z.boolean(),
          decidedAt: Time.nullable(),
          deciders: z
            .array(Ref.extend({ at: Time.nullable() }))
            .describe("every vote that decided it (several under a quorum)"),
          reason: z.string().nullable(),
        }),
      ),
    }),
    byAgent: z.array(z.object({ agent: Ref, ...BacktestTally })),
    byTool: z.array(z.object({ toolName: z.string(), ...BacktestTally })),
    summary: z
      .string()
      .describe('e.g. "would have approved 312 cards (340 calls), overturning none"'),
  })
  .meta({ id: "PolicyBacktest" });

export const PolicySuggestionResource = z
  .object({
    id: z.string(),
    fingerprint: z.string().describe("the evidence; a dismissal holds while it is the same"),
    agent: Ref,
    toolName: z.string(),
    argPredicates: z.array(ArgPredicateResource),
    rule: z
      .object({
        name: z.string(),
        queue: z.string(),
        effect: z.literal("allow"),
        agent: z.string(),
        toolPattern: z.string(),
        argPredicates: z.array(ArgPredicateResource),
        enabled: z.boolean(),
      })
      .describe("the body of POST /policy-rules that creates it (enabled false: created off)"),
    backtest: PolicyBacktestResource,
  })
  .meta({ id: "PolicySuggestion" });

export const AgentKeyResource = z
  .object({
    id: z.string(),
    name: z.string(),
    keyPrefix: z.string().describe("the start of the current secret, to recognise it"),
    mode: z.enum(AGENT_MODES),
    defaultQueue: Ref,
    queues: z.array(Ref).describe("every queue the key may target, the default included"),
    owner: Ref.extend({ email: z.string() }).nullable(),
    createdAt: Time,
    revokedAt: Time.nullable(),
    lastUsedAt: Time.nullable().describe("recorded at most once a minute"),
    previousKeyExpiresAt: Time.nullable().describe(
      "until when the secret replaced by the last rotation still works (null: it does not)",
    ),
  })
  .meta({ id: "AgentKey" });

export const ReviewerTokenResource = z
  .object({
    id: z.string(),
    tokenPrefix: z.string().describe("the start of the secret, to recognise it"),
    user: Ref.extend({ email: z.string() }),
    createdAt: Time,
    lastUsedAt: Time.nullable().describe("recorded at most once a minute"),
    revokedAt: Time.nullable(),
  })
  .meta({ id: "ReviewerToken" });

export const AuditEntryResource = z
  .object({
    seq: z.int(),
    type: z.string(),
    at: Time,
    queueId: z.string().nullable(),
    actor: z.object({ kind: z.string(), id: z.string().nullable(), name: z.string().nullable() }),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "AuditEntry" });

export const SavedViewResource = z
  .object({
    id: z.string(),
    name: z.string(),
    queue: Ref,
    filters: z
      .object({
        agent: z.string().optional(),
        tool: z.string().optional(),
        kind: z.enum(["action", "plan"]).optional(),
        status: z.enum(["pending", "decided", "cancelled", "all"]).optional(),
      })
      .describe("the queue page's filters this view applies"),
    createdBy: Ref,
    createdAt: Time,
    canDelete: z.boolean().describe("the caller saved it, or leads its queue"),
  })
  .meta({ id: "SavedView" });

export const PersonResource = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    status: z
      .enum(["active", "invited", "deactivated"])
      .describe("invited: no password set yet (the invite link not used)"),
    queues: z
      .array(z.object({ id: z.string(), name: z.string(), role: z.enum(QUEUE_ROLES) }))
      .describe("a lead sees only the memberships of the queues they lead"),
    lastSignInAt: Time.nullable().describe("when their newest live session began"),
    createdAt: Time,
    deactivatedAt: Time.nullable(),
  })
  .meta({ id: "Person" });

export const OneTimeLinkResource = z
  .object({
    url: z.string().describe("shown this once; only the token's hash is kept; works once"),
    expiresAt: Time,
  })
  .meta({ id: "OneTimeLink" });

export const NotificationPreferenceResource = z
  .object({
    queue: Ref,
    delivery: z
      .enum(NOTIFICATION_DELIVERIES)
      .describe("immediate: one email per card; digest: one email every digestMinutes; off"),
    digestMinutes: z.int(),
    events: z.object({
      newCards: z.boolean().describe("a new card arrives in the queue"),
      deadlines: z.boolean().describe("a pending card has a fifth of its time left"),
      escalations: z.boolean().describe("a card is escalated into the queue"),
      decisions: z.boolean().describe("a card the person claimed is decided by someone else"),
    }),
    updatedAt: Time.nullable().describe("null: never saved, the defaults apply (off)"),
  })
  .meta({ id: "NotificationPreference" });

export const MySettingsResource = z
  .object({
    id: z.string(),
    name: z.string(),
    email: z.string(),
    timeZone: z
      .string()
      .nullable()
      .describe(
        "the IANA zone every time is shown in, pages and emails; null: pages follow the browser's zone, emails are in UTC",
      ),
    shortcutsEnabled: z
      .boolean()
      .describe(
        "whether single-key shortcuts act in the queue (default true); false: letters do nothing, buttons still work",
      ),
  })
  .meta({ id: "MySettings" });

const McpGatewayResource = z.object({
  id: z.string(),
  name: z.string().describe("the path segment of its endpoint, and the server's name in policies"),
  url: z.string().describe("the upstream MCP server's streamable HTTP endpoint"),
  endpoint: z
    .string()
    .describe("where agents connect (MCP streamable HTTP, their agent key as Bearer)"),
  headerNames: z
    .array(z.string())
    .describe("the headers sent upstream; their values are write-only, never returned"),
  status: z.enum(["enabled", "disabled"]),
  revision: z.number().int(),
  agents: z.array(z.object({ id: z.string(), name: z.string() })),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const GatedCallResource = z
  .object({
    decision: z
      .enum(["allow", "deny", "ask"])
      .describe(
        "allow: forward the call (with the call's decision.editedArgs when a reviewer edited it); deny: never forward it (the call's decision.reason says why); ask: a person decides, wait on `batch` and use its decision with POST /runs/{runId}/gated-calls/{callId}/use",
      ),
    callId: z
      .string()
      .describe("the call this answer is about: an earlier identical call's when pickedUp"),
    pickedUp: z
      .boolean()
      .describe(
        "answered from the card of an earlier identical call of this gateway whose decision nobody used (its client gave up waiting, or the gateway restarted)",
      ),
    batch: BatchResource,
    reported: z
      .array(z.string())
      .optional()
      .describe(
        "POST /runs/{runId}/gated-calls only: the outcomes sent along that this request took (recorded now, recorded before, or refused for good); the others are to be sent again",
      ),
  })
  .meta({ id: "GatedCall" });

// --- insights ---

const Count = z.int().nonnegative();
const Outcomes = { approved: Count, rejected: Count };
const Named = { id: z.string(), name: z.string() };
const Share = z.number().min(0).max(1).nullable();
const FatigueCounts = {
  ...Outcomes,
  quickApprovals: Count.describe("approving votes cast within quickMs of the card appearing"),
  quickShare: Share.describe("quickApprovals / approved; null without approvals"),
  approvalRate: Share.describe("approved / (approved + rejected); null without votes"),
};

/** The answer of `GET /insights` (lib/insights/insights-query.ts). */
export const InsightsResource = z.object({
  period: z.object({
    from: z.string().describe("inclusive"),
    to: z.string().describe("exclusive"),
    bucketMs: z.int().describe("the width of each `series` bar: an hour, a day or a week"),
  }),
  queues: z.array(z.object(Named)).describe("the queues the caller may see insights of"),
  queueId: z.string().nullable().describe("the queue covered; null: all of `queues`"),
  totals: z.object({
    created: Count,
    decided: Count.describe("settled by decisions"),
    expired: Count.describe("settled at a deadline nobody met (deadlines missed)"),
    cancelled: Count.describe("withdrawn by their agent"),
    escalatedCards: Count.describe("cards escalated out of the queues in the period, each once"),
    escalations: Count.describe("escalations in the period, counted when they happened"),
  }),
  timeToDecision: z
    .object({
      count: Count,
      p50Ms: z.number().nullable(),
      p90Ms: z.number().nullable(),
      p99Ms: z.number().nullable(),
    })
    .describe("creation to settling, over settled cards that waited (nearest-rank percentiles)"),
  series: z.array(z.object({ start: z.string(), created: Count, settled: Count })),
  bySource: z.array(z.object({ source: z.enum(DECISION_SOURCES), ...Outcomes })),
  byTool: z.array(z.object({ tool: z.string(), ...Outcomes })),
  byAgent: z.array(z.object({ ...Named, ...Outcomes })),
  reviewers: z
    .array(z.object({ ...Named, ...Outcomes }))
    .describe("votes each reviewer cast on the period's cards"),
  fatigue: z
    .object({
      quickMs: z.int().describe("an approval sooner than this after the card appeared is quick"),
      byReviewer: z.array(z.object({ ...Named, ...FatigueCounts })),
      byTool: z.array(z.object({ tool: z.string(), ...FatigueCounts })),
    })
    .describe(
      "approval fatigue: each reviewer's and each tool's votes on the period's cards (people only: policy, remembered and deadline decisions cast none), how many approvals came within quickMs of the card appearing (its creation, or its latest escalation into the queue before the vote), most quick approvals first",
    ),
  perQueue: z.array(
    z.object({
      ...Named,
      created: Count,
      decided: Count,
      expired: Count,
      cancelled: Count,
      escalatedCards: Count,
    }),
  ),
});

export const resourceSchemas = {
  Run: RunResource,
  GatedCall: GatedCallResource,
  GatedOutcomes: z.object({
    recorded: z.array(z.string()).describe("the calls whose outcome this request recorded"),
    alreadyReported: z
      .array(z.string())
      .describe("the calls whose outcome was recorded before (a retried report): nothing changed"),
  }),
  Batch: BatchResource,
  Call: CallResource,
  Event: EventResource,
  Claim: z.object({
    claimToken: z.string(),
    leaseExpiresAt: Time,
    run: RunResource,
    checkpoint: z.unknown(),
    batch: BatchResource.nullable(),
    rollback: z
      .array(
        z.object({
          toolCallId: z.string(),
          revert: z.unknown(),
          result: z.unknown(),
          reportedAt: Time,
          seq: z.int(),
        }),
      )
      .nullable(),
  }),
  Lease: z.object({ leaseExpiresAt: Time }),
  QueuePage: z.object({ batches: z.array(BatchResource), nextCursor: z.string().nullable() }),
  HistoryPage: z.object({ batches: z.array(BatchResource), nextCursor: z.string().nullable() }),
  RoutingRule: RoutingRuleResource,
  RoutingRuleList: z.object({ rules: z.array(RoutingRuleResource) }),
  PolicyRule: PolicyRuleResource,
  PolicyRuleList: z.object({ rules: z.array(PolicyRuleResource) }),
  PolicyBacktest: PolicyBacktestResource,
  PolicySuggestionList: z.object({
    queue: Ref,
    period: z.object({ from: Time, to: Time }),
    minApprovals: z.int(),
    dismissed: z.int().describe("suggestions left out because a lead dismissed them"),
    suggestions: z.array(PolicySuggestionResource),
  }),
  PolicySuggestionDismissal: z.object({
    suggestionId: z.string(),
    fingerprint: z.string(),
    dismissedAt: Time,
  }),
  PolicyTrial: z.object({
    outcome: z.enum(["approved", "blocked", "rejected", "review"]),
    effect: z.enum(POLICY_EFFECTS),
    agentMode: z.enum(AGENT_MODES),
    explanation: z.string(),
    rule: z.object({ id: z.string(), name: z.string() }).nullable(),
    checks: z.array(
      z.object({
        rule: z.object({
          id: z.string(),
          name: z.string(),
          effect: z.enum(POLICY_EFFECTS),
          queueId: z.string().nullable(),
          conditions: z.string(),
        }),
        matched: z.boolean(),
        conditions: z.array(
          z.object({
            condition: z.string(),
            held: z.boolean(),
            why: z
              .string()
              .nullable()
              .describe("what the call had where the condition looked, e.g. which value failed"),
          }),
        ),
      }),
    ),
  }),
  AgentKey: AgentKeyResource,
  AgentKeyList: z.object({ agents: z.array(AgentKeyResource) }),
  CreatedAgentKey: z.object({
    agent: AgentKeyResource,
    key: z.string().describe("the secret: shown this once, only its hash is kept"),
    webhookSecret: z.string().describe("signs its webhooks (Standard Webhooks whsec_…)"),
  }),
  RotatedAgentKey: z.object({
    agent: AgentKeyResource,
    key: z.string().describe("the new secret: shown this once"),
  }),
  RevokedAgentKey: z.object({ agent: AgentKeyResource }),
  McpGatewayList: z.object({ gateways: z.array(McpGatewayResource) }),
  McpGatewayAnswer: z.object({ gateway: McpGatewayResource }),
  ReviewerTokenList: z.object({ tokens: z.array(ReviewerTokenResource) }),
  CreatedReviewerToken: z.object({
    token: z.string().describe("the secret: shown this once, only its hash is kept"),
    reviewerToken: ReviewerTokenResource,
  }),
  RevokedReviewerToken: z.object({ token: ReviewerTokenResource }),
  SignedOutEverywhere: z.object({ sessionsEnded: z.int(), tokensRevoked: z.int() }),
  Person: PersonResource,
  PersonList: z.object({ people: z.array(PersonResource) }),
  InvitedPerson: z.object({
    person: PersonResource,
    invite: OneTimeLinkResource.nullable().describe("null when created with a password"),
  }),
  OneTimeLink: OneTimeLinkResource,
  Insights: InsightsResource,
  AuditPublicKey: z.object({
    algorithm: z.literal("Ed25519"),
    publicKey: z
      .string()
      .describe(
        "the raw 32-byte public key, base64: pass it to `audit verify-export --public-key`",
      ),
    keyId: z.string().describe("the first 16 hex digits of the key's SHA-256, to compare by eye"),
  }),
  AuditLog: z.object({
    events: z.array(AuditEntryResource),
    nextCursor: z.int().nullable().describe("pass as ?before= for older events; null: no more"),
  }),
  QueueSnapshot: z.object({
    batches: z.array(BatchResource),
    lastEventId: z.int(),
    pendingTotal: z.int().describe("pending batches of the reviewer's queues, on all pages"),
    nextCursor: z.string().nullable(),
  }),
  CallDecision: z.object({ call: CallResource, batch: BatchResource }),
  Queue: QueueResource,
  QueueDetail: QueueDetailResource,
  QueueMember: QueueMemberResource,
  QueueMemberList: z.object({ members: z.array(QueueMemberResource) }),
  QueueList: z.object({
    queues: z.array(QueueResource),
    canCreateQueues: z.boolean().describe("the caller is an installation admin"),
  }),
  NotificationPreference: NotificationPreferenceResource,
  MySettings: MySettingsResource,
  NotificationPreferenceList: z.object({
    preferences: z
      .array(NotificationPreferenceResource)
      .describe("one per open queue the caller belongs to, by queue name"),
    emailConfigured: z.boolean().describe("whether this server sends email (SMTP_URL is set)"),
  }),
  SsoSettings: z.union([
    z.object({
      configured: z.literal(true),
      settings: z.object({
        enabled: z.boolean(),
        displayName: z.string(),
        issuer: z.string(),
        clientId: z.string(),
        clientSecretSet: z.literal(true).describe("the secret itself is never sent back"),
        allowedDomains: z.array(z.string()),
        groupsClaim: z.string(),
        groupRoles: z.array(
          z.object({ group: z.string(), queueId: z.string(), role: z.enum(["reviewer", "lead"]) }),
        ),
        updatedAt: z.string(),
        updatedBy: z.object({ id: z.string().nullable(), name: z.string().nullable() }),
        redirectUri: z.string().describe("the address to register at the identity provider"),
      }),
    }),
    z.object({ configured: z.literal(false), redirectUri: z.string() }),
  ]),
  SavedView: SavedViewResource,
  SavedViewList: z.object({ views: z.array(SavedViewResource) }),
  ErrorResponse: z.object({
    // Loose: some errors carry more (already_claimed its `holder` and `expiresAt`); a client that
    // validated answers against a closed shape would reject them.
    error: z.looseObject({
      code: z
        .string()
        .describe(
          `the contract's error code: ${ERROR_CODES.join(", ")} (clients should expect new codes to be added)`,
        ),
      message: z.string(),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
      current: z.unknown().optional().describe("409: the resource as it is now"),
      allow: z.array(z.string()).optional().describe("405: the methods served here"),
      retryAfterSecs: z.int().optional().describe("429: seconds until the limit lifts"),
    }),
  }),
};
