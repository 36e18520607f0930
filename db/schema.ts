import { sql } from "drizzle-orm";
import {
  type AnySQLiteColumn,
  index,
  integer,
  primaryKey,
  real,
  sqliteTable,
  text,
  uniqueIndex,
} from "drizzle-orm/sqlite-core";

// Times are integer milliseconds since the epoch; ids are UUIDv7 strings (sortable by creation).

/* ---------------------------------------------------------------- better-auth */

// Reviewers are better-auth users; these four tables use better-auth's names and columns.
export const users = sqliteTable("user", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  email: text("email").notNull().unique(),
  emailVerified: integer("email_verified", { mode: "boolean" }).notNull().default(false),
  image: text("image"),
  createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  /** Countersign's, not better-auth's: a deactivated person cannot sign in or use a token */
  deactivatedAt: integer("deactivated_at"),
  // When they last signed in (sessions end at sign-out, so the session table cannot tell).
  lastSignInAt: integer("last_sign_in_at"),
  // Their own choice of time zone (an IANA name) for every time shown to them, in pages and in
  // emails; null: the browser's zone (emails: UTC). See lib/time/zone.ts.
  timeZone: text("time_zone"),
  // Whether single-key shortcuts (a, r, e, j, k, z, ?) act for them; off: a key typed by a speech
  // input or a stray keystroke decides nothing (WCAG 2.1.4). Buttons always work.
  shortcutsEnabled: integer("shortcuts_enabled", { mode: "boolean" }).notNull().default(true),
});
export type User = typeof users.$inferSelect;
export type NewUser = typeof users.$inferInsert;

export const sessions = sqliteTable(
  "session",
  {
    id: text("id").primaryKey(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
    token: text("token").notNull().unique(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
    ipAddress: text("ip_address"),
    userAgent: text("user_agent"),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
  },
  (t) => [index("session_user_idx").on(t.userId)],
);
export type Session = typeof sessions.$inferSelect;

export const accounts = sqliteTable(
  "account",
  {
    id: text("id").primaryKey(),
    accountId: text("account_id").notNull(),
    providerId: text("provider_id").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    accessToken: text("access_token"),
    refreshToken: text("refresh_token"),
    idToken: text("id_token"),
    accessTokenExpiresAt: integer("access_token_expires_at", { mode: "timestamp_ms" }),
    refreshTokenExpiresAt: integer("refresh_token_expires_at", { mode: "timestamp_ms" }),
    scope: text("scope"),
    password: text("password"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (t) => [index("account_user_idx").on(t.userId)],
);
export type Account = typeof accounts.$inferSelect;

export const verifications = sqliteTable("verification", {
  id: text("id").primaryKey(),
  identifier: text("identifier").notNull(),
  value: text("value").notNull(),
  expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  createdAt: integer("created_at", { mode: "timestamp_ms" }),
  updatedAt: integer("updated_at", { mode: "timestamp_ms" }),
});

/* ---------------------------------------------------------------- queues and people */

// Every change to queues, routing_rules and policy_rules raises the counter in
// `pause_settings_version` (triggers of migration 0030), on which every process's copy of them
// is guarded (lib/batches/pause-settings.ts). A migration that rebuilds one of these tables
// (drizzle-kit's CREATE __new_…, DROP, RENAME) drops its triggers and must create them again:
// test/unit/pause-settings.test.ts checks all nine are there. The counter's table is not declared
// here: only those triggers write it, and SQL reads it.
export const queues = sqliteTable("queues", {
  id: text("id").primaryKey(),
  name: text("name").notNull().unique(),
  requiredApprovals: integer("required_approvals").notNull().default(1),
  separationOfDuties: integer("separation_of_duties", { mode: "boolean" }).notNull().default(false),
  defaultTimeoutSecs: integer("default_timeout_secs").notNull().default(3600),
  /** where a batch with onTimeout "escalate" goes at its deadline; none: it is rejected */
  escalationQueueId: text("escalation_queue_id").references((): AnySQLiteColumn => queues.id),
  /** a reviewer's "I'm reviewing this": `mark` shows it to others, `lock` also stops their decisions */
  claimMode: text("claim_mode", { enum: ["mark", "lock"] })
    .notNull()
    .default("mark"),
  /**
   * whether an agent may ask for onTimeout "approve" on this queue: off, a batch nobody decided
   * can never approve itself (an agent asking for 1 s and "approve" would approve its own call)
   */
  approveOnTimeout: integer("approve_on_timeout", { mode: "boolean" }).notNull().default(false),
  /** the shortest deadline (seconds) a batch that approves on timeout may have */
  approveOnTimeoutMinSecs: integer("approve_on_timeout_min_secs").notNull().default(300),
  /** the Slack channel its cards are posted to (lib/slack); none: not posted to Slack */
  slackChannelId: text("slack_channel_id"),
  createdAt: integer("created_at").notNull(),
  archivedAt: integer("archived_at"),
});
export type Queue = typeof queues.$inferSelect;
export type NewQueue = typeof queues.$inferInsert;

export const QUEUE_ROLES = ["reviewer", "lead", "admin"] as const;
export type QueueRole = (typeof QUEUE_ROLES)[number];

export const queueMembers = sqliteTable(
  "queue_members",
  {
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    role: text("role", { enum: QUEUE_ROLES }).notNull().default("reviewer"),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.queueId, t.userId] }),
    // "which queues may this reviewer see" runs on every reviewer request and stream
    index("queue_members_user_idx").on(t.userId),
  ],
);
export type QueueMember = typeof queueMembers.$inferSelect;

export const AGENT_MODES = ["ask", "allow", "deny", "off"] as const;
export type AgentMode = (typeof AGENT_MODES)[number];

// An agent key is the agent: its name is shown on cards. Only the key's SHA-256 is stored.
export const agentKeys = sqliteTable(
  "agent_keys",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull().unique(),
    keyPrefix: text("key_prefix").notNull(),
    // After a rotation the replaced key keeps working until previousKeyExpiresAt (the grace period
    // a deployment needs to roll out the new one); authentication checks the clock, no sweeper.
    previousKeyHash: text("previous_key_hash"),
    previousKeyExpiresAt: integer("previous_key_expires_at"),
    defaultQueueId: text("default_queue_id")
      .notNull()
      .references(() => queues.id),
    ownerUserId: text("owner_user_id").references(() => users.id),
    // Signs this agent's webhooks (Standard Webhooks `whsec_…`); it must be readable to sign.
    webhookSecret: text("webhook_secret").notNull(),
    // ask: policy rules apply; allow: approve all but what a rule blocks; deny: reject what would
    // need a reviewer; off: the gate is disabled, every call approved (and still logged).
    mode: text("mode", { enum: AGENT_MODES }).notNull().default("ask"),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
    /** written at most once a minute per process (lib/auth/last-used.ts) */
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [
    // authentication looks a rotated key up by its previous hash during the grace period
    index("agent_keys_previous_hash_idx")
      .on(t.previousKeyHash)
      .where(sql`${t.previousKeyHash} is not null`),
  ],
);
export type AgentKey = typeof agentKeys.$inferSelect;

export const agentKeyQueues = sqliteTable(
  "agent_key_queues",
  {
    agentKeyId: text("agent_key_id")
      .notNull()
      .references(() => agentKeys.id),
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
  },
  (t) => [primaryKey({ columns: [t.agentKeyId, t.queueId] })],
);

export const reviewerTokens = sqliteTable(
  "reviewer_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    tokenPrefix: text("token_prefix").notNull(),
    createdAt: integer("created_at").notNull(),
    revokedAt: integer("revoked_at"),
    /** written at most once a minute per process (lib/auth/last-used.ts) */
    lastUsedAt: integer("last_used_at"),
  },
  (t) => [index("reviewer_tokens_user_idx").on(t.userId)],
);
export type ReviewerToken = typeof reviewerTokens.$inferSelect;

// One-time links an admin (or a lead) hands to a person: an invite to set a first password, or a
// password reset. Only the token's SHA-256 is kept; a link works once, until it expires.
export const PERSON_LINK_KINDS = ["invite", "password_reset"] as const;
export type PersonLinkKind = (typeof PERSON_LINK_KINDS)[number];

export const personLinks = sqliteTable(
  "person_links",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: PERSON_LINK_KINDS }).notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    /** who issued it; null for the operator (CLI) */
    createdBy: text("created_by"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    usedAt: integer("used_at"),
  },
  (t) => [index("person_links_user_idx").on(t.userId)],
);
export type PersonLink = typeof personLinks.$inferSelect;

/* ---------------------------------------------------------------- runs, batches, calls */

export const RUN_STATUSES = [
  "running",
  "waiting_approval",
  "ready",
  "resuming",
  "completed",
  "failed",
  "cancelled",
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
/** How a run was started: through the HTTP API (a worker claims it) or an MCP client's tool call. */
export const RUN_ORIGINS = ["api", "mcp"] as const;
export type RunOrigin = (typeof RUN_ORIGINS)[number];
/** A run in one of these is over: nothing may pause, claim or complete it. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled"];

export const runs = sqliteTable(
  "runs",
  {
    id: text("id").primaryKey(),
    agentKeyId: text("agent_key_id")
      .notNull()
      .references(() => agentKeys.id),
    // The queue whose members may see the run's own events (its first batch's queue).
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    externalId: text("external_id"),
    conversationId: text("conversation_id"),
    status: text("status", { enum: RUN_STATUSES }).notNull(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    checkpoint: text("checkpoint", { mode: "json" }).$type<unknown>(),
    // The live claim: only the SHA-256 of the token is kept.
    claimTokenHash: text("claim_token_hash"),
    claimWorkerId: text("claim_worker_id"),
    leaseExpiresAt: integer("lease_expires_at"),
    claimedAt: integer("claimed_at"),
    // Action batches are refused until a plan batch of this run is approved.
    requirePlanApproval: integer("require_plan_approval", { mode: "boolean" })
      .notNull()
      .default(false),
    rollbackRequestedAt: integer("rollback_requested_at"),
    rollbackReason: text("rollback_reason"),
    // MCP has no claim: an MCP run is finished when its client reads the decision (lib/mcp).
    origin: text("origin", { enum: RUN_ORIGINS }).notNull().default("api"),
    result: text("result", { mode: "json" }).$type<unknown>(),
    error: text("error", { mode: "json" }).$type<unknown>(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    index("runs_agent_idx").on(t.agentKeyId, t.createdAt),
    // insights count decisions by agent: a run's agent without reading its (large) row
    index("runs_insights_agent_idx").on(t.id, t.agentKeyId),
    // the sweeper looks for leases that ran out
    index("runs_lease_idx")
      .on(t.leaseExpiresAt)
      .where(sql`${t.status} = 'resuming'`),
  ],
);
export type Run = typeof runs.$inferSelect;
export type NewRun = typeof runs.$inferInsert;

export const BATCH_KINDS = ["action", "plan"] as const;
export const BATCH_STATUSES = ["pending", "decided", "expired", "cancelled"] as const;
export const BATCH_OUTCOMES = ["approved", "rejected", "mixed"] as const;
export const TIMEOUT_ACTIONS = ["reject", "approve", "escalate"] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
export type BatchOutcome = (typeof BATCH_OUTCOMES)[number];
export type TimeoutAction = (typeof TIMEOUT_ACTIONS)[number];

export type Plan = {
  summary: string;
  rationale?: string;
  resources?: string[];
  risks?: string[];
  rollback?: string;
};

export const batches = sqliteTable(
  "batches",
  {
    id: text("id").primaryKey(),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id),
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    kind: text("kind", { enum: BATCH_KINDS }).notNull(),
    status: text("status", { enum: BATCH_STATUSES }).notNull(),
    outcome: text("outcome", { enum: BATCH_OUTCOMES }),
    plan: text("plan", { mode: "json" }).$type<Plan>(),
    onTimeout: text("on_timeout", { enum: TIMEOUT_ACTIONS }).notNull(),
    callbackUrl: text("callback_url"),
    cancelReason: text("cancel_reason"),
    createdAt: integer("created_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    decidedAt: integer("decided_at"),
    /** how many times the batch moved to an escalation queue (the chain is capped) */
    escalations: integer("escalations").notNull().default(0),
    /** the routing rule that chose the queue, when one did */
    routingRuleId: text("routing_rule_id"),
    /** policy blocked every call: reviewers never see the batch (its agent and the log do) */
    hiddenFromReviewers: integer("hidden_from_reviewers", { mode: "boolean" })
      .notNull()
      .default(false),
  },
  (t) => [
    index("batches_run_idx").on(t.runId, t.createdAt),
    // the reviewer queue lists a queue's batches newest first
    index("batches_queue_idx").on(t.queueId, t.status, t.id),
    // the deadline sweeper only ever scans pending batches by deadline
    index("batches_pending_deadline_idx")
      .on(t.expiresAt)
      .where(sql`${t.status} = 'pending'`),
    // insights (lib/insights) count a queue's cards created in a period from the index alone
    index("batches_queue_created_idx").on(t.queueId, t.createdAt),
    // A queue's settled batches by decision time, then id: history's keyset pages (newest decision
    // first) and insights' counts of a period by status, wait and escalations, from the index
    // alone. One index for both, so that settling a batch writes one index entry, not two.
    index("batches_insights_settled_idx")
      .on(t.queueId, t.decidedAt, t.id, t.status, t.createdAt, t.escalations, t.runId)
      .where(sql`${t.status} <> 'pending'`),
  ],
);
export type Batch = typeof batches.$inferSelect;
export type NewBatch = typeof batches.$inferInsert;

/** Why a policy settled a call: the rule that matched (a copy, as rules change) or the agent mode. */
export type PolicyDecision = {
  effect: PolicyEffect;
  rule: { id: string; name: string; queueId: string | null } | null;
  agentMode: AgentMode;
  blocked: boolean;
};

export const CALL_STATUSES = ["pending", "approved", "rejected", "expired", "cancelled"] as const;
export const DECISION_SOURCES = ["reviewer", "policy", "memory", "timeout"] as const;
export const REMEMBER_SCOPES = ["once", "run", "conversation"] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export type DecisionSource = (typeof DECISION_SOURCES)[number];
export type RememberScope = (typeof REMEMBER_SCOPES)[number];

export const calls = sqliteTable(
  "calls",
  {
    id: text("id").primaryKey(),
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id),
    runId: text("run_id")
      .notNull()
      .references(() => runs.id),
    position: integer("position").notNull(),
    toolCallId: text("tool_call_id").notNull(),
    toolName: text("tool_name").notNull(),
    args: text("args", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    inputSchema: text("input_schema", { mode: "json" }).$type<Record<string, unknown>>(),
    summary: text("summary"),
    risks: text("risks", { mode: "json" }).$type<string[]>().notNull(),
    costEstimate: real("cost_estimate"),
    /** ISO 4217 code of costEstimate, as the agent stated it (USD when it said none) */
    costCurrency: text("cost_currency").notNull().default("USD"),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, unknown>>(),
    status: text("status", { enum: CALL_STATUSES }).notNull(),
    revision: integer("revision").notNull().default(1),
    // SHA-256 over the tool name and the canonical JSON of `args` (as the agent asked them).
    actionHash: text("action_hash").notNull(),
    requiredApprovals: integer("required_approvals").notNull(),
    // A reviewer's edit of the args: what the current revision asks to approve (votes carry its hash).
    editedArgs: text("edited_args", { mode: "json" }).$type<Record<string, unknown>>(),
    decisionOutcome: text("decision_outcome", { enum: ["approved", "rejected"] }),
    decisionSource: text("decision_source", { enum: DECISION_SOURCES }),
    decidedBy: text("decided_by").references(() => users.id),
    // The decider as they were named at the decision: a later rename must not rewrite the audit
    // trail (null on rows decided before these columns existed: the live name is shown then).
    decidedByName: text("decided_by_name"),
    decidedByEmail: text("decided_by_email"),
    decidedAt: integer("decided_at"),
    decisionReason: text("decision_reason"),
    decisionScope: text("decision_scope", { enum: REMEMBER_SCOPES }),
    // What settled the call at creation when the source is `policy`: the rule (as it was then) or
    // the agent's mode.
    decisionPolicy: text("decision_policy", { mode: "json" }).$type<PolicyDecision>(),
    // A call put through an MCP gateway (lib/gated-calls): the gateway's name (its upstream server),
    // null for any other call. Its decision is used once: `usedAt` is when a gateway took it (set
    // at creation when policy or memory answered at once), `reportedAt` when the tool's outcome
    // was reported, so a retried report is not a second one.
    gateway: text("gateway"),
    usedAt: integer("used_at"),
    reportedAt: integer("reported_at"),
  },
  (t) => [
    uniqueIndex("calls_batch_position_idx").on(t.batchId, t.position),
    // a restarted gateway picks up a decision nobody used yet by its call's hash; calls answered
    // at once are used at creation and never enter this index
    index("calls_gateway_unused_idx")
      .on(t.gateway, t.actionHash)
      .where(sql`${t.gateway} is not null and ${t.usedAt} is null`),
    // insights group a period's decisions by source, outcome, tool and decider without reading
    // the calls' rows (their args and schemas make them large); `id` joins their votes
    index("calls_insights_idx").on(
      t.batchId,
      t.decisionSource,
      t.decisionOutcome,
      t.toolName,
      t.decidedBy,
      t.id,
    ),
  ],
);
export type Call = typeof calls.$inferSelect;
export type NewCall = typeof calls.$inferInsert;

// A vote is found by its call, revision and reviewer, and the table is keyed by them: created
// WITHOUT ROWID (migration 0031, which drizzle cannot express), it is one b-tree, where a rowid
// table with a text id and a unique index on these columns was three, all written on every vote.
// A migration that rebuilds it must say WITHOUT ROWID again (test/db/votes-migration.test.ts
// checks the table after every migration).
export const votes = sqliteTable(
  "votes",
  {
    id: text("id").notNull(),
    callId: text("call_id")
      .notNull()
      .references(() => calls.id),
    reviewerId: text("reviewer_id")
      .notNull()
      .references(() => users.id),
    outcome: text("outcome", { enum: ["approved", "rejected"] }).notNull(),
    revision: integer("revision").notNull(),
    actionHash: text("action_hash").notNull(),
    // the voter as named when voting (see calls.decidedByName)
    reviewerName: text("reviewer_name"),
    reviewerEmail: text("reviewer_email"),
    createdAt: integer("created_at").notNull(),
  },
  // one vote per reviewer per revision: nobody's approval counts twice
  (t) => [primaryKey({ columns: [t.callId, t.revision, t.reviewerId] })],
);
export type Vote = typeof votes.$inferSelect;

// Approvals a reviewer asked to remember beyond one call (scope `run` or `conversation`).
export const rememberedApprovals = sqliteTable(
  "remembered_approvals",
  {
    id: text("id").primaryKey(),
    scope: text("scope", { enum: ["run", "conversation"] }).notNull(),
    // the run id or the conversation id, according to scope
    scopeKey: text("scope_key").notNull(),
    agentKeyId: text("agent_key_id")
      .notNull()
      .references(() => agentKeys.id),
    // A memory holds only in the queue that approved: another queue's quorum and rules still apply.
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    actionHash: text("action_hash").notNull(),
    callId: text("call_id")
      .notNull()
      .references(() => calls.id),
    approvedBy: text("approved_by").references(() => users.id),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    // looked up for every call at batch creation
    index("remembered_lookup_idx").on(t.scope, t.scopeKey, t.agentKeyId, t.actionHash, t.queueId),
  ],
);

/* ---------------------------------------------------------------- the event log */

export const ACTOR_KINDS = ["reviewer", "agent", "system"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export const events = sqliteTable(
  "events",
  {
    // Monotonic: SQLite commits one writer at a time, so seq order is commit order. Every row's
    // seq is given by its INSERT, the last row's + 1 (lib/events/event-chain.ts), so AUTOINCREMENT
    // would add nothing but a write of sqlite_sequence to every write batch (migration 0029).
    seq: integer("seq").primaryKey(),
    type: text("type").notNull(),
    at: integer("at").notNull(),
    runId: text("run_id"),
    batchId: text("batch_id"),
    callId: text("call_id"),
    // Who may see the event: members of this queue.
    queueId: text("queue_id"),
    actorKind: text("actor_kind", { enum: ACTOR_KINDS }).notNull(),
    actorId: text("actor_id"),
    actorName: text("actor_name"),
    data: text("data", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    // The hash chain (lib/events/event-chain.ts): SHA3-256 of the previous row's hash and this
    // row's content, written by the INSERT itself. Null only in a row that did not come through
    // eventRows (which `audit verify` reports).
    hash: text("hash"),
  },
  (t) => [
    // run streams and timelines replay one run's events
    index("events_run_idx").on(t.runId, t.seq),
    // reviewer streams replay their queues' events
    index("events_queue_idx").on(t.queueId, t.seq),
    // insights count a period's escalations when they happen (lib/insights/read-insights.ts);
    // partial, so no other event's write pays for it
    index("events_escalations_idx")
      .on(t.at, t.batchId, t.queueId)
      .where(sql`${t.type} = 'batch.escalated'`),
  ],
);
export type EventRow = typeof events.$inferSelect;
export type NewEventRow = typeof events.$inferInsert;

/* ---------------------------------------------------------------- idempotency and webhooks */

export const idempotencyKeys = sqliteTable(
  "idempotency_keys",
  {
    agentKeyId: text("agent_key_id")
      .notNull()
      .references(() => agentKeys.id),
    // the operation, e.g. "POST /runs" or "POST /runs/{id}/batches"
    scope: text("scope").notNull(),
    key: text("key").notNull(),
    requestHash: text("request_hash").notNull(),
    resourceId: text("resource_id").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.agentKeyId, t.scope, t.key] })],
);

// Deliveries are retried until answered 2xx; `failed` is for those that never can be (a target
// the send-time check refuses, a receiver answering 410 Gone: lib/webhooks/deliver-webhooks.ts).
export const WEBHOOK_STATUSES = ["pending", "delivered", "failed"] as const;

export const webhookDeliveries = sqliteTable(
  "webhook_deliveries",
  {
    // also the Standard Webhooks `webhook-id`: receivers deduplicate on it
    id: text("id").primaryKey(),
    agentKeyId: text("agent_key_id")
      .notNull()
      .references(() => agentKeys.id),
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id),
    url: text("url").notNull(),
    eventType: text("event_type").notNull(),
    payload: text("payload").notNull(),
    status: text("status", { enum: WEBHOOK_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    deliveredAt: integer("delivered_at"),
  },
  (t) => [
    // the delivery worker polls only the deliveries still owed
    index("webhook_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);
export type WebhookDelivery = typeof webhookDeliveries.$inferSelect;

/* ---------------------------------------------------------------- settings */

// Server-wide values that every instance over the database must share, such as the secret that
// signs session cookies when BETTER_AUTH_SECRET is not set.
export const appSettings = sqliteTable("app_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
  createdAt: integer("created_at").notNull(),
});

// Rate-limit counters shared by every instance over the database (lib/auth/rate-limit-counts.ts):
// bearer-credential guessing and better-auth's sign-in limit, keyed by "<scope>:<client address>".
export const rateLimitCounts = sqliteTable(
  "rate_limit_counts",
  {
    key: text("key").primaryKey(),
    count: integer("count").notNull(),
    windowEndsAt: integer("window_ends_at").notNull(),
  },
  // Expired rows are purged with every count and blocked ones listed each second: both by window end.
  (t) => [index("rate_limit_counts_window_ends_at").on(t.windowEndsAt)],
);
export type RateLimitCount = typeof rateLimitCounts.$inferSelect;

/* ---------------------------------------------------------------- routing */

// Where a batch goes when the agent names no queue: the first enabled rule (by position) whose
// conditions all hold, else the agent key's default queue.
export const routingRules = sqliteTable(
  "routing_rules",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull().unique(),
    position: integer("position").notNull(),
    /** only this agent key's batches; null: any agent */
    agentKeyId: text("agent_key_id").references(() => agentKeys.id),
    /** a glob over tool names (`*` any run of characters), matched by any call; null: any tool */
    toolPattern: text("tool_pattern"),
    /** the batch's total cost estimate at least this; null: any cost */
    minCost: real("min_cost"),
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("routing_rules_position_idx").on(t.position)],
);
export type RoutingRule = typeof routingRules.$inferSelect;

export const POLICY_EFFECTS = ["allow", "ask", "deny"] as const;
export type PolicyEffect = (typeof POLICY_EFFECTS)[number];
/** `atMost`: a number at most the value (the bound a suggested rule puts on, say, an amount) */
export const PREDICATE_OPS = ["equals", "prefix", "glob", "atMost"] as const;
export type ArgPredicate = {
  /** a path into the call's args: `path`, `options.target`, `files[0].path` */
  path: string;
  op: (typeof PREDICATE_OPS)[number];
  value: unknown;
};

// Policy rules decide, when a batch is created, which calls need a human at all.
export const policyRules = sqliteTable(
  "policy_rules",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    // null: the rule applies in every queue
    queueId: text("queue_id").references(() => queues.id),
    position: integer("position").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull().default(true),
    effect: text("effect", { enum: POLICY_EFFECTS }).notNull(),
    agentKeyId: text("agent_key_id").references(() => agentKeys.id),
    toolPattern: text("tool_pattern"),
    argPredicates: text("arg_predicates", { mode: "json" }).$type<ArgPredicate[]>().notNull(),
    // the call's cost estimate above this
    costAbove: real("cost_above"),
    // told to the agent (and so its model) when the rule blocks a call
    reason: text("reason"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [index("policy_rules_queue_idx").on(t.queueId, t.position)],
);
export type PolicyRule = typeof policyRules.$inferSelect;

// A lead's "not this one" to a policy suggestion (lib/policies/suggest-policies.ts). The
// fingerprint is the evidence it was dismissed on: once the evidence changes (a new bound, or
// twice the approvals), the fingerprint does, and the suggestion is offered again.
export const policySuggestionDismissals = sqliteTable(
  "policy_suggestion_dismissals",
  {
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    /** the suggested rule's key (agent, tool, condition), hashed */
    suggestionId: text("suggestion_id").notNull(),
    fingerprint: text("fingerprint").notNull(),
    dismissedBy: text("dismissed_by").references(() => users.id, { onDelete: "set null" }),
    dismissedAt: integer("dismissed_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.queueId, t.suggestionId] })],
);
export type PolicySuggestionDismissal = typeof policySuggestionDismissals.$inferSelect;

// The weekly suggestions digest's memory, per queue: when it last ran and which suggestions
// (id:fingerprint) it has announced, so a lead hears of a suggestion once.
export const policySuggestionDigests = sqliteTable("policy_suggestion_digests", {
  queueId: text("queue_id")
    .primaryKey()
    .references(() => queues.id),
  ranAt: integer("ran_at").notNull(),
  announced: text("announced", { mode: "json" }).$type<string[]>().notNull(),
});

/* ---------------------------------------------------------------- review claims, saved views */

// "I'm reviewing this": one live claim per batch, for a few minutes, renewable. A claim past
// expiresAt is free for anyone (no sweeper needed: every check compares with the clock).
export const reviewClaims = sqliteTable("review_claims", {
  batchId: text("batch_id")
    .primaryKey()
    .references(() => batches.id),
  userId: text("user_id")
    .notNull()
    .references(() => users.id),
  claimedAt: integer("claimed_at").notNull(),
  expiresAt: integer("expires_at").notNull(),
});
export type ReviewClaim = typeof reviewClaims.$inferSelect;

// "Not now" (lib/set-aside): a reviewer set a pending card aside until `until`; it is out of
// their own queue view until then, or until the last fifth of the card's time begins if that
// is sooner (computed when read, so a deadline moved by an escalation counts). A row past its
// moment simply stops showing: no sweeper. One row per card and reviewer.
export const setAsides = sqliteTable(
  "set_asides",
  {
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id),
    setAt: integer("set_at").notNull(),
    until: integer("until").notNull(),
  },
  (t) => [primaryKey({ columns: [t.batchId, t.userId] })],
);
export type SetAside = typeof setAsides.$inferSelect;

// Named queue-page filters shared with a queue's members.
export const savedViews = sqliteTable(
  "saved_views",
  {
    id: text("id").primaryKey(),
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    name: text("name").notNull(),
    /** the queue page's URL filters: { agent?, tool?, kind?, status? } */
    filters: text("filters", { mode: "json" }).$type<Record<string, string>>().notNull(),
    createdBy: text("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [uniqueIndex("saved_views_queue_name_idx").on(t.queueId, t.name)],
);
export type SavedView = typeof savedViews.$inferSelect;

/* ---------------------------------------------------------------- notifications */

// What a person wants to hear about from one of their queues (lib/notifications). No row: nothing
// (notifications are opted into, so turning email on for a server mails nobody unasked).
export const NOTIFICATION_DELIVERIES = ["immediate", "digest", "off"] as const;
export type NotificationDelivery = (typeof NOTIFICATION_DELIVERIES)[number];
export const NOTIFICATION_KINDS = [
  "new_card",
  "deadline",
  "escalation",
  "decision",
  "suggestions",
] as const;
export type NotificationKind = (typeof NOTIFICATION_KINDS)[number];

export const notificationPreferences = sqliteTable(
  "notification_preferences",
  {
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    delivery: text("delivery", { enum: NOTIFICATION_DELIVERIES }).notNull(),
    /** how often a digest goes out (minutes); only read when delivery is "digest" */
    digestMinutes: integer("digest_minutes").notNull().default(60),
    newCards: integer("new_cards", { mode: "boolean" }).notNull(),
    deadlines: integer("deadlines", { mode: "boolean" }).notNull(),
    escalations: integer("escalations", { mode: "boolean" }).notNull(),
    decisions: integer("decisions", { mode: "boolean" }).notNull(),
    /** a lead's weekly email of new policy suggestions (lib/policies/suggestions-digest.ts) */
    suggestions: integer("suggestions", { mode: "boolean" }).notNull().default(true),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.queueId] }),
    // the planner reads the preferences of the queues its events are in
    index("notification_preferences_queue_idx").on(t.queueId),
  ],
);
export type NotificationPreference = typeof notificationPreferences.$inferSelect;

// How far the planner (lib/notifications/plan-notifications.ts) has read: `events` is the last
// event seq it turned into notifications, `deadlines` the time up to which it looked for
// deadlines approaching; `slack` the last event seq the Slack planner (lib/slack/plan-slack.ts) has
// read. Moved by compare-and-swap in the batch that writes the notifications.
export const notificationCursors = sqliteTable("notification_cursors", {
  name: text("name", { enum: ["events", "deadlines", "slack"] }).primaryKey(),
  position: integer("position").notNull(),
});

export const NOTIFICATION_CHANNELS = ["email"] as const;
export const NOTIFICATION_STATUSES = ["pending", "sent", "skipped", "failed"] as const;
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number];

// The notification outbox: one row per (thing that happened, person, channel), retried with
// backoff until sent, or skipped when the person may no longer see the card at send time.
export const notifications = sqliteTable(
  "notifications",
  {
    id: text("id").primaryKey(),
    /**
     * what happened: `event:<seq>`, `deadline:<batch id>:<escalations>`, or
     * `suggestions:<queue id>:<week>` (a weekly digest of policy suggestions: no card)
     */
    eventKey: text("event_key").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    channel: text("channel", { enum: NOTIFICATION_CHANNELS }).notNull(),
    kind: text("kind", { enum: NOTIFICATION_KINDS }).notNull(),
    /** the card it is about; null for a suggestions digest, which is about a queue */
    batchId: text("batch_id").references(() => batches.id),
    /** the queue whose preferences asked for it (the batch may move on before it is sent) */
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    /** gathered into one digest message with the person's other due digest notifications */
    digest: integer("digest", { mode: "boolean" }).notNull(),
    /** what the message says happened, beyond the card: the outcome and who decided, the queues */
    detail: text("detail", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    status: text("status", { enum: NOTIFICATION_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    sentAt: integer("sent_at"),
  },
  (t) => [
    // never twice for the same event, person and channel, however often the planner runs
    uniqueIndex("notifications_once_idx").on(t.eventKey, t.userId, t.channel),
    // the delivery worker polls only what is still owed
    index("notifications_due_idx")
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
  ],
);
export type Notification = typeof notifications.$inferSelect;
export type NewNotification = typeof notifications.$inferInsert;

// Card links in emails are signed and expire by themselves (lib/email/card-links.ts); using one
// writes its id here, so a second use finds it and is refused.
export const cardLinkUses = sqliteTable("card_link_uses", {
  linkId: text("link_id").primaryKey(),
  userId: text("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  batchId: text("batch_id").notNull(),
  usedAt: integer("used_at").notNull(),
});

/* ---------------------------------------------------------------- slack */

export const SLACK_POST_STATUSES = ["pending", "posted", "skipped", "failed"] as const;
export type SlackPostStatus = (typeof SLACK_POST_STATUSES)[number];

// The Slack outbox (lib/slack): one row per card posted to a queue's channel. `pending` until
// chat.postMessage answered (then `posted` with Slack's `ts`), retried with backoff; a posted
// message is brought up to date (chat.update) while `wantedSeq` (the newest event that changes
// it) is ahead of `shownSeq` (the newest it was rendered after).
export const slackMessages = sqliteTable(
  "slack_messages",
  {
    id: text("id").primaryKey(),
    batchId: text("batch_id")
      .notNull()
      .references(() => batches.id),
    /** the queue whose channel it is posted in (the card may move on; the message then says so) */
    queueId: text("queue_id")
      .notNull()
      .references(() => queues.id),
    channelId: text("channel_id").notNull(),
    /** Slack's id of the message, once posted */
    ts: text("ts"),
    status: text("status", { enum: SLACK_POST_STATUSES }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: integer("next_attempt_at").notNull(),
    lastError: text("last_error"),
    wantedSeq: integer("wanted_seq").notNull(),
    shownSeq: integer("shown_seq").notNull().default(0),
    createdAt: integer("created_at").notNull(),
    postedAt: integer("posted_at"),
  },
  (t) => [
    // a card is posted once to a queue's channel, however often the planner runs
    uniqueIndex("slack_messages_once_idx").on(t.batchId, t.queueId, t.channelId),
    // the worker polls only what is owed: a post, or an update
    index("slack_messages_due_idx")
      .on(t.nextAttemptAt)
      .where(
        sql`${t.status} = 'pending' or (${t.status} = 'posted' and ${t.wantedSeq} > ${t.shownSeq})`,
      ),
  ],
);
export type SlackMessage = typeof slackMessages.$inferSelect;
export type NewSlackMessage = typeof slackMessages.$inferInsert;

// The cluster's once-only periodic work (deadline and lease sweeps, the outboxes) is done by the
// one instance holding its lease (lib/cluster/hold-lease.ts). The holder renews before
// `expires_at` (the database's clock, so hosts' clocks never disagree); once it has passed,
// another instance takes the row over by compare-and-swap. No event: who runs the sweeps is not
// a change anyone reviews, and a renewal every few seconds would flood the log.
export const clusterLeases = sqliteTable("cluster_leases", {
  name: text("name", { enum: ["background"] }).primaryKey(),
  holder: text("holder").notNull(),
  expiresAt: integer("expires_at").notNull(),
});
export type ClusterLease = typeof clusterLeases.$inferSelect;

/* ---------------------------------------------------------------- hosted MCP gateways */

export const MCP_GATEWAY_STATUSES = ["enabled", "disabled"] as const;
export type McpGatewayStatus = (typeof MCP_GATEWAY_STATUSES)[number];

// An upstream MCP server (streamable HTTP) that Countersign serves at /api/mcp/gateways/{name}
// for the agent keys allowed on it, every tools/call gated (lib/mcp-gateways/README.md).
export const mcpGateways = sqliteTable("mcp_gateways", {
  id: text("id").primaryKey(),
  /** the path segment and the server's name on cards and in policies (`name.tool`) */
  name: text("name").notNull().unique(),
  url: text("url").notNull(),
  // The headers sent upstream ({ name: value } as JSON), the upstream's own token among them:
  // sealed as one value (lib/auth/sealed-secrets.ts), never returned. Their names are kept apart,
  // in clear, to show which are set.
  headers: text("headers").notNull(),
  headerNames: text("header_names", { mode: "json" }).$type<string[]>().notNull(),
  status: text("status", { enum: MCP_GATEWAY_STATUSES }).notNull().default("enabled"),
  /** grows with every change; edits compare-and-swap on it */
  revision: integer("revision").notNull().default(1),
  createdAt: integer("created_at").notNull(),
  updatedAt: integer("updated_at").notNull(),
});
export type McpGateway = typeof mcpGateways.$inferSelect;

export const mcpGatewayAgents = sqliteTable(
  "mcp_gateway_agents",
  {
    gatewayId: text("gateway_id")
      .notNull()
      .references(() => mcpGateways.id),
    agentKeyId: text("agent_key_id")
      .notNull()
      .references(() => agentKeys.id),
  },
  (t) => [primaryKey({ columns: [t.gatewayId, t.agentKeyId] })],
);
