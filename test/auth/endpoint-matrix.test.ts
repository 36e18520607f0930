import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { eq } from "drizzle-orm";
import { queueMembers, reviewerTokens, type QueueRole } from "@/db/schema";
import {
  approveBatch,
  makeCallerReviewers,
  makeReviewers,
  pausedRun,
  startApiServer,
  writeSnapshot,
} from "../support/api-fixtures";
import { makeAgentKey, makeQueue, type TestReviewer } from "../support/factories";
import { apiClient, refundBatch, type ApiClient } from "../support/http";
import { startTestIdp, type TestIdp } from "../support/oidc-idp";
import type { TestServer } from "../support/server";
import { sessionClient } from "../support/sessions";

// Issue 7: the authorization matrix over EVERY endpoint of the API — each operation the server's
// own OpenAPI document lists, called by every kind of caller, with the status each must get. An
// operation the document lists and this table does not fails the suite, so a new endpoint cannot
// ship without its row. Refusals must write nothing.
//
// The other surfaces have their matrices beside this one: pages (test/auth/page-matrix.test.ts),
// server actions (test/auth/action-matrix.test.ts), and what the streams carry to whom
// (test/streams/*: membership changes, other queues' events, blocked calls).

type Caller = "none" | "owner" | "peerAgent" | "nonMember" | "reviewer" | "lead" | "admin";
const CALLERS: Caller[] = ["none", "owner", "peerAgent", "nonMember", "reviewer", "lead", "admin"];
// owner: the agent key that made the run; peerAgent: another agent key of the same queue;
// nonMember: a reviewer of another queue only; reviewer / lead: members of the fixture's queue;
// admin: an admin of another queue, which makes them an installation admin.

let server: TestServer;
/** the identity provider PUT /sso names: its issuer must answer */
let idp: TestIdp;
let people: Record<"nonMember" | "reviewer" | "lead" | "admin", TestReviewer>;
let reviewerClients: Record<"nonMember" | "reviewer" | "lead" | "admin" | "none", ApiClient>;

beforeAll(async () => {
  server = await startApiServer("endpoint-matrix", {
    // Slack configured, so its interaction endpoint is served (below); no queue has a channel,
    // so nothing is posted, and nothing listens at this address
    SLACK_BOT_TOKEN: "xoxb-endpoint-matrix",
    SLACK_SIGNING_SECRET: "endpoint-matrix-signing-secret",
    SLACK_API_URL: "http://127.0.0.1:9/api/",
    // the session-only rows sign the matrix's reviewers in afresh for each fixture
    SIGN_IN_ATTEMPTS_PER_MINUTE: "1000",
  });
  idp = await startTestIdp({ redirectUri: `${server.baseUrl}/api/auth/callback/sso` });
  ({ people } = await makeCallerReviewers());
  const { nonMember, reviewer, lead, admin } = people;
  reviewerClients = {
    nonMember: apiClient(server.baseUrl, nonMember.token),
    reviewer: apiClient(server.baseUrl, reviewer.token),
    lead: apiClient(server.baseUrl, lead.token),
    admin: apiClient(server.baseUrl, admin.token),
    none: apiClient(server.baseUrl),
  };
});
afterAll(async () => {
  await server?.stop();
  await idp?.stop();
});

async function addMembership(queueId: string, userId: string, role: QueueRole) {
  await getDb().insert(queueMembers).values({ queueId, userId, role, createdAt: Date.now() });
}

const unique = () => Math.random().toString(36).slice(2, 10);

/**
 * A fresh queue per case: the matrix's reviewer and lead in it, two agent keys for it, a run of the
 * owner paused on a one-call batch (or decided and claimed, for the worker endpoints), and one of
 * each thing an endpoint can act on.
 */
async function fixture(stage: "pending" | "claimed", session = false) {
  const queue = await makeQueue();
  await addMembership(queue.id, people.reviewer.id, "reviewer");
  await addMembership(queue.id, people.lead.id, "lead");
  const [target] = await makeReviewers(1, queue.name, { name: "Tess Target" });
  // the newcomer comes from another queue the lead leads: a lead adds no one outside their queues
  const home = await makeQueue();
  await addMembership(home.id, people.lead.id, "lead");
  const [newcomer] = await makeReviewers(1, home.name, { name: "Nico Newcomer" });
  const ownerKey = await makeAgentKey({ queues: [queue.name] });
  const peerKey = await makeAgentKey({ queues: [queue.name] });
  const owner = apiClient(server.baseUrl, ownerKey.key);
  const admin = reviewerClients.admin;
  const { run, batch } = await pausedRun(owner, refundBatch({ queue: queue.id }));
  let claimToken = "no-claim-yet";
  if (stage === "claimed") {
    await approveBatch(reviewerClients.reviewer, batch);
    const claim = await owner.post(`/runs/${run.id}/claim`, {
      workerId: "matrix",
      // a lease that ran out would be expired by the server mid-suite: a write no request made
      leaseSecs: 3600,
    });
    if (claim.status !== 200) throw new Error(`claim answered ${claim.status}`);
    claimToken = claim.body.claimToken;
  }
  const created = async (path: string, body: unknown, by = admin) => {
    const answer = await by.post(path, body);
    if (answer.status !== 201)
      throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const routingRule = await created("/routing-rules", {
    name: `r-${unique()}`,
    queue: queue.id,
    toolPattern: "never_*",
  });
  const policyRule = await created("/policy-rules", {
    name: `p-${unique()}`,
    queue: queue.id,
    effect: "ask",
    toolPattern: "never_*",
  });
  const view = await created(
    "/views",
    { queueId: queue.id, name: `v-${unique()}`, filters: { status: "all" } },
    reviewerClients.reviewer,
  );
  const gateway = (
    await created("/mcp-gateways", {
      name: `g-${unique()}`,
      url: "http://127.0.0.1:9/mcp",
      headers: { Authorization: "Bearer upstream-secret-of-the-matrix" },
      agents: [ownerKey.id],
    })
  ).gateway;
  const [targetToken] = await getDb()
    .select({ id: reviewerTokens.id })
    .from(reviewerTokens)
    .where(eq(reviewerTokens.userId, target!.id));
  return {
    queue,
    run,
    batch,
    call: batch.calls[0],
    claimToken,
    target: target!,
    targetTokenId: targetToken!.id,
    newcomer: newcomer!,
    agentId: ownerKey.id,
    routingRule,
    policyRule,
    view,
    gateway,
    clients: {
      ...reviewerClients,
      // signed in afresh: "sign out everywhere" (below) ends the earlier sessions
      ...(session && {
        nonMember: await sessionClient(server.baseUrl, people.nonMember.email),
        reviewer: await sessionClient(server.baseUrl, people.reviewer.email),
        lead: await sessionClient(server.baseUrl, people.lead.email),
        admin: await sessionClient(server.baseUrl, people.admin.email),
      }),
      owner,
      peerAgent: apiClient(server.baseUrl, peerKey.key),
    } satisfies Record<Caller, ApiClient>,
  };
}
type Fixture = Awaited<ReturnType<typeof fixture>>;

type Row = {
  /** "METHOD /template" exactly as the OpenAPI document lists it */
  operation: string;
  stage?: "pending" | "claimed";
  request: (f: Fixture) => [path: string, body?: unknown];
  expected: Record<Caller, number>;
  /**
   * Leads to a new credential, so it takes a signed-in session only (lib/auth/require-session.ts):
   * the reviewers call it with their session cookie here, and every key or token is 403 (below).
   */
  session?: true;
};

// Who may do what. Agents act only on their own runs (another agent's run does not exist for
// them: 404); reviewers act only in their queues (another queue's things do not exist: 404);
// installation-wide settings (routing rules, agents, global policy) are for admins.
// prettier-ignore
const { AGENT_OWN, EITHER_RUN, REVIEWER_LIST, MEMBER_DECIDES, MEMBER_READS, LEAD_MANAGES, ADMIN_ONLY } = {
  AGENT_OWN:      { none: 401, owner: 200, peerAgent: 404, nonMember: 403, reviewer: 403, lead: 403, admin: 403 },
  EITHER_RUN:     { none: 401, owner: 200, peerAgent: 404, nonMember: 404, reviewer: 200, lead: 200, admin: 404 },
  REVIEWER_LIST:  { none: 401, owner: 403, peerAgent: 403, nonMember: 200, reviewer: 200, lead: 200, admin: 200 },
  MEMBER_DECIDES: { none: 401, owner: 403, peerAgent: 403, nonMember: 404, reviewer: 200, lead: 200, admin: 404 },
  MEMBER_READS:   { none: 401, owner: 403, peerAgent: 403, nonMember: 404, reviewer: 200, lead: 200, admin: 200 },
  LEAD_MANAGES:   { none: 401, owner: 403, peerAgent: 403, nonMember: 404, reviewer: 403, lead: 200, admin: 200 },
  ADMIN_ONLY:     { none: 401, owner: 403, peerAgent: 403, nonMember: 403, reviewer: 403, lead: 403, admin: 200 },
};
const but = (base: Record<Caller, number>, changes: Partial<Record<Caller, number>>) => ({
  ...base,
  ...changes,
});

// prettier-ignore
const MATRIX: Row[] = [
  // the agent's side
  { operation: "POST /runs", request: (f) => ["/runs", { batch: refundBatch({ queue: f.queue.id }) }],
    expected: { none: 401, owner: 201, peerAgent: 201, nonMember: 403, reviewer: 403, lead: 403, admin: 403 } },
  { operation: "GET /runs/{runId}", request: (f) => [`/runs/${f.run.id}`], expected: EITHER_RUN },
  { operation: "POST /runs/{runId}/batches", stage: "claimed",
    request: (f) => [`/runs/${f.run.id}/batches`, { ...refundBatch({ queue: f.queue.id }), claimToken: f.claimToken }],
    expected: but(AGENT_OWN, { owner: 201 }) },
  { operation: "GET /batches/{batchId}", request: (f) => [`/batches/${f.batch.id}`], expected: EITHER_RUN },
  { operation: "POST /batches/{batchId}/cancel", request: (f) => [`/batches/${f.batch.id}/cancel`, {}], expected: AGENT_OWN },
  { operation: "POST /runs/{runId}/claim", request: (f) => [`/runs/${f.run.id}/claim`, { workerId: "w" }],
    // the run is still waiting for its decision: its owner may not claim it yet
    expected: but(AGENT_OWN, { owner: 409 }) },
  { operation: "POST /runs/{runId}/heartbeat", stage: "claimed",
    request: (f) => [`/runs/${f.run.id}/heartbeat`, { claimToken: f.claimToken }], expected: AGENT_OWN },
  { operation: "POST /runs/{runId}/events", stage: "claimed",
    request: (f) => [`/runs/${f.run.id}/events`, { claimToken: f.claimToken, type: "tool.completed", toolCallId: f.call.toolCallId, result: { ok: true } }],
    expected: but(AGENT_OWN, { owner: 201 }) },
  // A gateway's calls go on a running run: this one waits for its batch (409), and its call is no
  // gateway's (404 for its owner too); test/mcp-gateway/gated-calls.test.ts covers them working.
  { operation: "POST /runs/{runId}/gated-calls",
    request: (f) => [`/runs/${f.run.id}/gated-calls`, { gateway: "fs", toolCallId: "g1", toolName: "write_file", args: { path: "a" } }],
    expected: but(AGENT_OWN, { owner: 409 }) },
  { operation: "POST /runs/{runId}/gated-calls/{callId}/use",
    request: (f) => [`/runs/${f.run.id}/gated-calls/${f.call.id}/use`, {}], expected: but(AGENT_OWN, { owner: 404 }) },
  { operation: "POST /runs/{runId}/gated-calls/outcomes",
    request: (f) => [`/runs/${f.run.id}/gated-calls/outcomes`, { outcomes: [{ callId: f.call.id, type: "tool.completed" }] }],
    expected: but(AGENT_OWN, { owner: 404 }) },
  { operation: "POST /runs/{runId}/complete", stage: "claimed",
    request: (f) => [`/runs/${f.run.id}/complete`, { claimToken: f.claimToken, outcome: "completed" }], expected: AGENT_OWN },
  { operation: "POST /runs/{runId}/rollback", stage: "claimed",
    request: (f) => [`/runs/${f.run.id}/rollback`, { reason: "undo" }], expected: but(EITHER_RUN, { owner: 202, reviewer: 202, lead: 202 }) },
  { operation: "GET /runs/{runId}/stream", request: (f) => [`/runs/${f.run.id}/stream`], expected: EITHER_RUN },

  // the reviewer's side
  { operation: "GET /queue", request: () => ["/queue"], expected: REVIEWER_LIST },
  { operation: "GET /queue/snapshot", request: () => ["/queue/snapshot"], expected: REVIEWER_LIST },
  { operation: "GET /history", request: () => ["/history"], expected: REVIEWER_LIST },
  { operation: "GET /history/export", request: () => ["/history/export?format=json"], expected: REVIEWER_LIST },
  { operation: "GET /stream", request: () => ["/stream"], expected: REVIEWER_LIST },
  { operation: "POST /calls/{callId}/decision",
    request: (f) => [`/calls/${f.call.id}/decision`, { outcome: "approve", expectedRevision: f.call.revision }], expected: MEMBER_DECIDES },
  { operation: "POST /batches/{batchId}/decision",
    request: (f) => [`/batches/${f.batch.id}/decision`, { outcome: "reject", reason: "no", expectedRevisions: { [f.call.id]: f.call.revision } }],
    expected: MEMBER_DECIDES },
  { operation: "POST /batches/{batchId}/review-claim", request: (f) => [`/batches/${f.batch.id}/review-claim`, {}], expected: MEMBER_DECIDES },
  { operation: "DELETE /batches/{batchId}/review-claim", request: (f) => [`/batches/${f.batch.id}/review-claim`], expected: MEMBER_DECIDES },
  { operation: "POST /batches/{batchId}/set-aside", request: (f) => [`/batches/${f.batch.id}/set-aside`, { for: "15m" }], expected: MEMBER_DECIDES },
  { operation: "DELETE /batches/{batchId}/set-aside", request: (f) => [`/batches/${f.batch.id}/set-aside`], expected: MEMBER_DECIDES },
  { operation: "GET /views", request: () => ["/views"], expected: REVIEWER_LIST },
  { operation: "POST /views", request: (f) => ["/views", { queueId: f.queue.id, name: `v-${unique()}`, filters: {} }],
    expected: but(MEMBER_DECIDES, { reviewer: 201, lead: 201 }) },
  { operation: "DELETE /views/{viewId}", request: (f) => [`/views/${f.view.id}`],
    // saved by the reviewer; leads of its queue may delete it too
    expected: MEMBER_DECIDES },

  // queues and members
  { operation: "GET /queues", request: () => ["/queues"], expected: REVIEWER_LIST },
  { operation: "POST /queues", request: () => ["/queues", { name: `new-${unique()}` }], expected: but(ADMIN_ONLY, { admin: 201 }) },
  { operation: "GET /queues/{queueId}", request: (f) => [`/queues/${f.queue.id}`], expected: MEMBER_READS },
  { operation: "PATCH /queues/{queueId}", request: (f) => [`/queues/${f.queue.id}`, { requiredApprovals: 2, approveOnTimeout: true, approveOnTimeoutMinSecs: 600, slackChannelId: "C0MATRIX" }], expected: LEAD_MANAGES },
  { operation: "POST /queues/{queueId}/archive", request: (f) => [`/queues/${f.queue.id}/archive`],
    expected: but(LEAD_MANAGES, { lead: 403 }) },
  { operation: "GET /queues/{queueId}/members", request: (f) => [`/queues/${f.queue.id}/members`], expected: MEMBER_READS },
  { operation: "POST /queues/{queueId}/members", request: (f) => [`/queues/${f.queue.id}/members`, { email: f.newcomer.email }],
    expected: but(LEAD_MANAGES, { lead: 201, admin: 201 }) },
  { operation: "PATCH /queues/{queueId}/members/{userId}", request: (f) => [`/queues/${f.queue.id}/members/${f.target.id}`, { role: "lead" }],
    expected: LEAD_MANAGES },
  { operation: "DELETE /queues/{queueId}/members/{userId}", request: (f) => [`/queues/${f.queue.id}/members/${f.target.id}`],
    expected: LEAD_MANAGES },

  // installation settings
  { operation: "GET /routing-rules", request: () => ["/routing-rules"], expected: ADMIN_ONLY },
  { operation: "POST /routing-rules", request: (f) => ["/routing-rules", { name: `r-${unique()}`, queue: f.queue.id, toolPattern: "x_*" }],
    expected: but(ADMIN_ONLY, { admin: 201 }) },
  { operation: "PATCH /routing-rules/{ruleId}", request: (f) => [`/routing-rules/${f.routingRule.id}`, { enabled: false }], expected: ADMIN_ONLY },
  { operation: "DELETE /routing-rules/{ruleId}", request: (f) => [`/routing-rules/${f.routingRule.id}`], expected: but(ADMIN_ONLY, { admin: 204 }) },
  { operation: "POST /routing-rules/{ruleId}/move", request: (f) => [`/routing-rules/${f.routingRule.id}/move`, { to: 0 }], expected: ADMIN_ONLY },
  { operation: "GET /policy-rules", request: (f) => [`/policy-rules?queue=${f.queue.id}`], expected: MEMBER_READS },
  { operation: "POST /policy-rules",
    request: (f) => ["/policy-rules", { name: `p-${unique()}`, queue: f.queue.id, effect: "deny", toolPattern: "y_*" }],
    expected: but(LEAD_MANAGES, { lead: 201, admin: 201 }) },
  { operation: "PATCH /policy-rules/{ruleId}", request: (f) => [`/policy-rules/${f.policyRule.id}`, { enabled: false }], expected: LEAD_MANAGES },
  { operation: "DELETE /policy-rules/{ruleId}", request: (f) => [`/policy-rules/${f.policyRule.id}`], expected: but(LEAD_MANAGES, { lead: 204, admin: 204 }) },
  { operation: "POST /policy-rules/{ruleId}/move", request: (f) => [`/policy-rules/${f.policyRule.id}/move`, { to: 0 }], expected: LEAD_MANAGES },
  { operation: "POST /policy-rules/try",
    request: (f) => ["/policy-rules/try", { queue: f.queue.id, call: { toolName: "refund_order", args: {} } }], expected: MEMBER_READS },
  // a backtest is authorized as creating the rule is; suggestions are the queue's leads' and admins'
  { operation: "POST /policy-rules/backtest",
    request: (f) => ["/policy-rules/backtest", { rule: { name: "b", queue: f.queue.id, effect: "allow", toolPattern: "refund_*" } }],
    expected: LEAD_MANAGES },
  { operation: "GET /policy-suggestions", request: (f) => [`/policy-suggestions?queue=${f.queue.id}`], expected: LEAD_MANAGES },
  { operation: "POST /policy-suggestions/dismiss",
    request: (f) => ["/policy-suggestions/dismiss", { queue: f.queue.id, suggestionId: "a".repeat(32), fingerprint: "b".repeat(32) }],
    expected: LEAD_MANAGES },
  { operation: "PATCH /agents/{agentId}", request: (f) => [`/agents/${f.agentId}`, { mode: "deny" }], expected: ADMIN_ONLY },

  // keys, tokens, sessions (issue 14): admins manage every agent key, a lead those of their
  // queues; a reviewer manages their own tokens and sessions, an admin anyone's tokens
  { operation: "GET /agents", request: () => ["/agents"], expected: but(ADMIN_ONLY, { lead: 200 }) },
  { operation: "POST /agents", request: (f) => ["/agents", { name: `a-${unique()}`, defaultQueue: f.queue.id }],
    expected: but(ADMIN_ONLY, { lead: 201, admin: 201 }), session: true },
  { operation: "POST /agents/{agentId}/rotate", request: (f) => [`/agents/${f.agentId}/rotate`, { graceSecs: 60 }],
    expected: but(ADMIN_ONLY, { lead: 200 }), session: true },
  { operation: "POST /agents/{agentId}/revoke", request: (f) => [`/agents/${f.agentId}/revoke`],
    expected: but(ADMIN_ONLY, { lead: 200 }) },
  { operation: "GET /reviewer-tokens", request: () => ["/reviewer-tokens"], expected: REVIEWER_LIST },
  // every reviewer makes their own (a token minting its successor would outlive its own revocation)
  { operation: "POST /reviewer-tokens", request: () => ["/reviewer-tokens", {}],
    expected: { none: 401, owner: 403, peerAgent: 403, nonMember: 201, reviewer: 201, lead: 201, admin: 201 }, session: true },
  { operation: "POST /reviewer-tokens/{tokenId}/revoke", request: (f) => [`/reviewer-tokens/${f.targetTokenId}/revoke`],
    // another reviewer's token does not exist for them
    expected: { none: 401, owner: 403, peerAgent: 403, nonMember: 404, reviewer: 404, lead: 404, admin: 200 } },
  { operation: "POST /sessions/revoke-all", request: () => ["/sessions/revoke-all", {}], expected: REVIEWER_LIST },
  { operation: "GET /audit", request: () => ["/audit"], expected: ADMIN_ONLY },
  { operation: "GET /audit/export", request: () => ["/audit/export?format=json"], expected: ADMIN_ONLY },
  { operation: "GET /audit/public-key", request: () => ["/audit/public-key"], expected: REVIEWER_LIST },
  // insights are for leads (their queues) and admins: a reviewer who leads nothing is refused
  { operation: "GET /insights", request: (f) => [`/insights?queue=${f.queue.id}`], expected: but(LEAD_MANAGES, { nonMember: 403 }) },

  // one's own notification preferences (issue 16): a person's own, for their own queues only
  { operation: "GET /me/notification-preferences", request: () => ["/me/notification-preferences"], expected: REVIEWER_LIST },
  { operation: "PUT /me/notification-preferences/{queueId}",
    request: (f) => [`/me/notification-preferences/${f.queue.id}`, { delivery: "digest", digestMinutes: 30, events: { newCards: true, deadlines: false, escalations: true, decisions: true } }],
    expected: MEMBER_DECIDES },
  // one's own settings (issue 16, time zones): every reviewer, each their own (no id to name another)
  { operation: "GET /me", request: () => ["/me"], expected: REVIEWER_LIST },
  { operation: "PATCH /me", request: () => ["/me", { timeZone: "Asia/Kolkata" }], expected: REVIEWER_LIST },

  // people (issue 14): admins manage everyone; a lead invites into their queues and resets the
  // passwords of their queues' members; renaming and deactivating are the admins'
  { operation: "GET /people", request: () => ["/people"], expected: but(ADMIN_ONLY, { lead: 200 }) },
  { operation: "POST /people", request: (f) => ["/people", { email: `p-${unique()}@example.com`, name: "Pia", queues: [{ queueId: f.queue.id }] }],
    expected: but(ADMIN_ONLY, { lead: 201, admin: 201 }), session: true },
  { operation: "PATCH /people/{userId}", request: (f) => [`/people/${f.target.id}`, { name: `Tess ${unique()}` }], expected: ADMIN_ONLY },
  { operation: "POST /people/{userId}/password-reset", request: (f) => [`/people/${f.target.id}/password-reset`],
    expected: but(ADMIN_ONLY, { lead: 201, admin: 201 }), session: true },

  // hosted MCP gateways (issue 25): any reviewer lists them (the endpoint to give agents); admins change them
  { operation: "GET /mcp-gateways", request: () => ["/mcp-gateways"], expected: REVIEWER_LIST },
  { operation: "POST /mcp-gateways", request: () => ["/mcp-gateways", { name: `g-${unique()}`, url: "http://127.0.0.1:9/mcp" }],
    expected: but(ADMIN_ONLY, { admin: 201 }) },
  { operation: "PATCH /mcp-gateways/{gatewayId}",
    request: (f) => [`/mcp-gateways/${f.gateway.id}`, { expectedRevision: f.gateway.revision, url: "http://127.0.0.1:9/v2/mcp" }], expected: ADMIN_ONLY },
  { operation: "POST /mcp-gateways/{gatewayId}/disable", request: (f) => [`/mcp-gateways/${f.gateway.id}/disable`], expected: ADMIN_ONLY },

  // single sign-on (issue 16): installation-wide, admins only
  { operation: "GET /sso", request: () => ["/sso"], expected: ADMIN_ONLY },
  { operation: "PUT /sso",
    request: () => ["/sso", { enabled: true, displayName: "Acme SSO", issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret }],
    expected: ADMIN_ONLY, session: true },
];

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const ERROR_CODES: Record<number, string> = {
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  409: "not_ready",
};

/** The call, with streams cut off once their answer's head is in. */
async function send(client: ApiClient, method: string, path: string, body?: unknown) {
  const controller = new AbortController();
  const response = await client.raw(path, {
    method,
    signal: controller.signal,
    ...(body !== undefined && {
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  });
  if (response.headers.get("content-type")?.startsWith("text/event-stream")) {
    controller.abort();
    return { status: response.status, body: null };
  }
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // a CSV export, say
  }
  return { status: response.status, body: parsed };
}

describe("the endpoint matrix", () => {
  it("has a row for every operation in the OpenAPI document", async () => {
    const document = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json();
    const listed = Object.entries(
      document.paths as Record<string, Record<string, unknown>>,
    ).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(listed.length).toBeGreaterThan(40);
    expect(MATRIX.map((row) => row.operation).sort()).toEqual([...listed].sort());
    // the rows marked `session` are the operations the document secures with a session only
    const sessionOnly = Object.entries(
      document.paths as Record<string, Record<string, { security?: unknown }>>,
    ).flatMap(([path, item]) =>
      METHODS.filter(
        (m) => JSON.stringify(item[m]?.security) === JSON.stringify([{ session: [] }]),
      ).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(
      MATRIX.filter((row) => row.session)
        .map((row) => row.operation)
        .sort(),
    ).toEqual(sessionOnly.sort());

    // Issue 27: the security schemes each operation names are exactly the credentials this matrix
    // finds accepted (a refused kind is 401/403 for everyone holding it), so a generated client
    // knows which token an operation wants
    const accepted = (callers: Caller[], row: Row) =>
      callers.some((caller) => ![401, 403].includes(row.expected[caller]));
    const documented = (operation: string) => {
      const [method, path] = operation.split(" ");
      const item = document.paths[path!][method!.toLowerCase()] as {
        security: Record<string, string[]>[];
      };
      return item.security.flatMap((requirement) => Object.keys(requirement));
    };
    const found = MATRIX.map((row) => {
      const reviewers = accepted(["nonMember", "reviewer", "lead", "admin"], row);
      return {
        operation: row.operation,
        schemes: row.session
          ? ["session"]
          : [
              ...(accepted(["owner", "peerAgent"], row) ? ["agentKey"] : []),
              ...(reviewers ? ["reviewerToken", "session"] : []),
            ],
      };
    });
    expect(found).toEqual(
      MATRIX.map((row) => ({ operation: row.operation, schemes: documented(row.operation) })),
    );
  });

  const cases = MATRIX.flatMap((row) =>
    CALLERS.map((caller) => ({ ...row, caller, status: row.expected[caller] })),
  );
  // A row's callers share one fixture until one of them changes it (a write that succeeded):
  // refusals write nothing (checked below), so the next caller meets the same state.
  const fixtures = new Map<string, Fixture>();
  it.each(cases)(
    "$operation as $caller → $status",
    async ({ operation, stage, request, caller, status, session }) => {
      const f = fixtures.get(operation) ?? (await fixture(stage ?? "pending", session));
      fixtures.set(operation, f);
      const [path, body] = request(f);
      const method = operation.split(" ")[0]!;
      const before = await writeSnapshot();
      const answer = await send(f.clients[caller], method, path, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      if (status >= 400) {
        expect(answer.body.error.code).toBe(ERROR_CODES[status]);
        expect(await writeSnapshot()).toEqual(before);
      } else if (method !== "GET") {
        fixtures.delete(operation);
      }
    },
  );
});

// What leads to a new credential answers every key and token 403 (issue 24: a reviewer token issued
// a reset link for its own account, signed in with it and minted new tokens), whoever holds it.
describe("the session-only operations", () => {
  const holders = CALLERS.filter((caller) => caller !== "none");
  const cases = MATRIX.filter((row) => row.session).flatMap((row) =>
    holders.map((caller) => ({ ...row, caller })),
  );
  // refusals write nothing, so a row's holders share one fixture
  const fixtures = new Map<string, Fixture>();
  it.each(cases)("$operation with the key or token of $caller → 403", async (row) => {
    const f = fixtures.get(row.operation) ?? (await fixture(row.stage ?? "pending"));
    fixtures.set(row.operation, f);
    const [path, body] = row.request(f);
    const before = await writeSnapshot();
    const answer = await send(f.clients[row.caller], row.operation.split(" ")[0]!, path, body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(403);
    expect(answer.body.error.code).toBe("forbidden");
    expect(await writeSnapshot()).toEqual(before);
  });
});

// Slack's interaction endpoint is not in the OpenAPI document: Slack calls it, signed with the
// app's signing secret, and no Countersign credential stands in for that signature. Every caller's
// own credentials, on a click that would approve their card, are 401 and write nothing
// (test/notifications/slack.test.ts signs requests as Slack does, forged and genuine).
describe("the Slack interaction endpoint", () => {
  it.each(CALLERS)("POST /api/slack/interactions as %s, unsigned → 401", async (caller) => {
    const f = await fixture("pending");
    const payload = {
      type: "block_actions",
      user: { id: "U0MATRIX" },
      trigger_id: "1.2.3",
      channel: { id: "C0MATRIX" },
      actions: [
        {
          action_id: "countersign_approve",
          value: JSON.stringify({ b: f.batch.id, r: { [f.call.id]: f.call.revision } }),
        },
      ],
    };
    const before = await writeSnapshot();
    // the client's base is /api/v1; the endpoint is beside it
    const answer = await f.clients[caller].raw("/../slack/interactions", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ payload: JSON.stringify(payload) }).toString(),
    });
    expect(answer.status).toBe(401);
    expect((await answer.json()).error.code).toBe("unauthenticated");
    expect(await writeSnapshot()).toEqual(before);
  });
});
