import { randomUUID } from "node:crypto";
import { eq, gt } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import {
  appSettings,
  batches,
  calls,
  events,
  notificationPreferences,
  personLinks,
  queueMembers,
  queues,
  reviewClaims,
  reviewerTokens,
  setAsides,
  routingRules,
  runs,
  users,
} from "@/db/schema";
import { addMember } from "@/lib/queues/add-member";
import { OPERATOR } from "@/lib/queues/queue-access";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { createRule } from "@/lib/routing/create-rule";
import { createMcpGateway } from "@/lib/mcp-gateways/create-mcp-gateway";
import {
  makeReviewers,
  pausedRun,
  startApiServer,
  writeSnapshot,
} from "@/test/support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "@/test/support/factories";
import { apiClient, refundBatch } from "@/test/support/http";
import { startTestIdp, type TestIdp } from "@/test/support/oidc-idp";
import type { TestServer } from "@/test/support/server";
import {
  actionPagePath,
  findServerAction,
  invokeServerAction,
  serverActions,
  type ServerActionRef,
} from "@/test/support/server-actions";
import { sessionCookie } from "@/test/support/sessions";

// Every server action × who calls it, over HTTP against `next start`, as a browser (or anyone
// with a session cookie and curl) would. Signed out → `unauthenticated`; a reviewer of another
// queue → `not_found`, word for word the answer for an id that does not exist; members decide and
// claim; leads and admins manage their queue; installation admins alone create queues and manage
// routing, and may manage any queue but decide only in their own; setup is closed once an account
// exists. A refused call writes nothing at all.

const CALLERS = ["signed out", "outsider", "reviewer", "lead", "admin", "admin elsewhere"] as const;
type Caller = (typeof CALLERS)[number];
type Person = Exclude<Caller, "signed out">;
/** who is in each cell's queue, with that role */
const MEMBER_ROLES = { reviewer: "reviewer", lead: "lead", admin: "admin" } as const;
const isMember = (caller: Caller): caller is keyof typeof MEMBER_ROLES => caller in MEMBER_ROLES;
type Answer =
  "ok" | "unauthenticated" | "not_found" | "forbidden" | "already_exists" | "invalid_request";

const MISSING = "01a20000-0000-7000-8000-000000000000";
const unique = () => randomUUID().slice(0, 8);

let server: TestServer;
/** the identity provider the single sign-on settings name: its issuer must answer */
let idp: TestIdp;
let actions: ServerActionRef[];
const people = {} as Record<Person, TestReviewer & { cookie: string }>;

beforeAll(async () => {
  server = await startApiServer("action-matrix");
  idp = await startTestIdp({ redirectUri: `${server.baseUrl}/api/auth/callback/sso` });
  actions = serverActions();
  // The outsider leads a queue of their own: a manager, but of nothing the matrix touches. The
  // admin elsewhere is an installation admin (admin of some queue) and a member of no cell's queue.
  const [elsewhere, theirs] = [await makeQueue(), await makeQueue()];
  const made = {
    outsider: await makeReviewer({ queues: [{ name: elsewhere.name, role: "lead" }] }),
    reviewer: await makeReviewer(),
    lead: await makeReviewer(),
    admin: await makeReviewer(),
    "admin elsewhere": await makeReviewer({ queues: [{ name: theirs.name, role: "admin" }] }),
  };
  for (const [who, person] of Object.entries(made))
    people[who as Person] = {
      ...person,
      cookie: await sessionCookie(server.baseUrl, person.email),
    };
}, 90_000);
afterAll(async () => {
  await server?.stop();
  await idp?.stop();
});

type Scene = { queue: { id: string; name: string } };

/** A queue of its own for each cell (a granted call changes it), with reviewer, lead and admin in it. */
async function scene(): Promise<Scene> {
  const queue = await makeQueue();
  for (const [who, role] of Object.entries(MEMBER_ROLES))
    await addMember(OPERATOR, queue.id, { email: people[who as Person].email, role });
  return { queue };
}

async function pendingBatch(s: Scene) {
  const agent = apiClient(server.baseUrl, (await makeAgentKey({ queues: [s.queue.name] })).key);
  const { run, batch } = await pausedRun(agent, refundBatch());
  return { run, batch, call: batch.calls[0] as { id: string; revision: number } };
}

/** Everything a call could write: the shared snapshot, and the rows it does not count. */
async function everything() {
  const db = getDb();
  return {
    counts: await writeSnapshot(),
    rows: {
      users: await db.select().from(users),
      queues: await db.select().from(queues),
      queueMembers: await db.select().from(queueMembers),
      routingRules: await db.select().from(routingRules),
      reviewClaims: await db.select().from(reviewClaims),
      setAsides: await db.select().from(setAsides),
      runs: await db.select().from(runs),
      batches: await db.select().from(batches),
      calls: await db.select().from(calls),
      personLinks: await db.select().from(personLinks),
      notificationPreferences: await db.select().from(notificationPreferences),
      appSettings: await db.select().from(appSettings),
    },
  };
}

type Call = {
  args: unknown[];
  /** values for the `[param]`s of the page the action is posted to */
  params?: Record<string, string>;
  /** the same call naming ids that do not exist */
  missing?: unknown[];
};

type ActionCase = {
  file: string;
  name: string;
  answers: Record<Caller, Answer>;
  /** the event a granted call appends, as the caller */
  event: string | null;
  /** builds this cell's target in its own queue and the call's arguments */
  prepare: (s: Scene, caller: Caller) => Promise<Call>;
  /** restores what a granted call took from the caller (a signed-out session), for later cells */
  after?: (caller: Caller) => Promise<void>;
};

/** decide, claim, roll back: the queue's members, whatever their role */
const MEMBERS: Record<Caller, Answer> = {
  "signed out": "unauthenticated",
  outsider: "not_found",
  reviewer: "ok",
  lead: "ok",
  admin: "ok",
  "admin elsewhere": "not_found",
};
/** settings and members: the queue's leads, and installation admins */
const MANAGERS: Record<Caller, Answer> = {
  ...MEMBERS,
  reviewer: "forbidden",
  "admin elsewhere": "ok",
};
/** archiving: installation admins only, but the queue stays hidden from outsiders */
const QUEUE_ADMINS: Record<Caller, Answer> = { ...MANAGERS, lead: "forbidden" };
/** new queues and routing rules: installation admins only, nothing to hide */
const INSTALLATION_ADMINS: Record<Caller, Answer> = { ...QUEUE_ADMINS, outsider: "forbidden" };
const NOBODY = Object.fromEntries(CALLERS.map((c) => [c, "already_exists"])) as Record<
  Caller,
  Answer
>;

const REVIEWER = "app/(reviewer)/actions.ts";
const QUEUES = "app/(reviewer)/queues/actions.ts";
const ROUTING = "app/(reviewer)/routing/actions.ts";
const SETUP = "app/(auth)/setup/actions.ts";
const POLICIES = "app/(reviewer)/policies/actions.ts";
const AGENTS = "app/(reviewer)/agents/actions.ts";
const TOKENS = "app/(reviewer)/tokens/actions.ts";
const PEOPLE = "app/(reviewer)/people/actions.ts";
const LINKS = "app/(auth)/invite/actions.ts";
const NOTIFICATIONS = "app/(reviewer)/notifications/actions.ts";
const SSO = "app/(reviewer)/settings/sso/actions.ts";
const SETTINGS = "app/(reviewer)/settings/actions.ts";
const GATEWAYS = "app/(reviewer)/mcp-gateways/actions.ts";
/** inviting into a queue, resetting its members' passwords: its leads and installation admins */
const PEOPLE_MANAGERS: Record<Caller, Answer> = { ...MANAGERS, outsider: "forbidden" };
/** renaming, deactivating: installation admins (a lead elsewhere is refused, not misled) */
const PEOPLE_ADMINS: Record<Caller, Answer> = { ...PEOPLE_MANAGERS, lead: "forbidden" };
/** their own tokens and sessions: anyone signed in */
const SIGNED_IN: Record<Caller, Answer> = {
  ...MANAGERS,
  outsider: "ok",
  reviewer: "ok",
};

/** "Try a call" reads: any member, and installation admins (who may see every queue). */
const READERS: Record<Caller, Answer> = { ...MEMBERS, "admin elsewhere": "ok" };

const newGateway = async () => ({
  // a public address: this process has no CALLBACK_ALLOWED_HOSTS (the server's loopback allowance)
  gateway: await createMcpGateway(OPERATOR, {
    name: `g-${unique()}`,
    url: "http://93.184.215.14/mcp",
  }),
});

const queueRule = (s: Scene) =>
  createPolicyRule(OPERATOR, {
    name: `rule-${unique()}`,
    queue: s.queue.id,
    effect: "allow",
    toolPattern: "read_*",
  });

const cases: ActionCase[] = [
  {
    file: REVIEWER,
    name: "decideCallAction",
    answers: MEMBERS,
    event: "call.decided",
    async prepare(s) {
      const { batch, call } = await pendingBatch(s);
      const decision = { outcome: "approve", expectedRevision: call.revision };
      return {
        params: { batchId: batch.id },
        args: [batch.id, call.id, decision],
        missing: [MISSING, MISSING, decision],
      };
    },
  },
  {
    file: REVIEWER,
    name: "decideBatchAction",
    answers: MEMBERS,
    event: "call.decided",
    async prepare(s) {
      const { batch, call } = await pendingBatch(s);
      const decision = (id: string) => ({
        outcome: "reject",
        expectedRevisions: { [id]: call.revision },
        reason: "Not this customer",
      });
      return {
        params: { batchId: batch.id },
        args: [batch.id, decision(call.id)],
        missing: [MISSING, decision(MISSING)],
      };
    },
  },
  {
    file: REVIEWER,
    name: "claimReviewAction",
    answers: MEMBERS,
    event: "review.claimed",
    async prepare(s) {
      const { batch } = await pendingBatch(s);
      return { params: { batchId: batch.id }, args: [batch.id, 5], missing: [MISSING, 5] };
    },
  },
  {
    file: REVIEWER,
    name: "releaseReviewAction",
    answers: MEMBERS,
    event: "review.released",
    async prepare(s, caller) {
      const { batch } = await pendingBatch(s);
      // A member releases their own claim; anyone else tries to end the reviewer's.
      const holder = isMember(caller) ? people[caller] : people.reviewer;
      const claimed = await apiClient(server.baseUrl, holder.token).post(
        `/batches/${batch.id}/review-claim`,
        {},
      );
      expect(claimed.status).toBe(200);
      return { params: { batchId: batch.id }, args: [batch.id], missing: [MISSING] };
    },
  },
  {
    file: REVIEWER,
    name: "setAsideAction",
    answers: MEMBERS,
    event: "batch.set_aside",
    async prepare(s) {
      const { batch } = await pendingBatch(s);
      return {
        params: { batchId: batch.id },
        args: [batch.id, "1h", "Europe/Berlin"],
        missing: [MISSING, "1h", "Europe/Berlin"],
      };
    },
  },
  {
    file: REVIEWER,
    name: "bringBackAction",
    answers: MEMBERS,
    event: "batch.brought_back",
    async prepare(s, caller) {
      const { batch } = await pendingBatch(s);
      // A member brings back their own card; anyone else tries to bring back the reviewer's.
      const setter = isMember(caller) ? people[caller] : people.reviewer;
      const aside = await apiClient(server.baseUrl, setter.token).post(
        `/batches/${batch.id}/set-aside`,
        { for: "15m" },
      );
      expect(aside.status).toBe(200);
      return { params: { batchId: batch.id }, args: [batch.id], missing: [MISSING] };
    },
  },
  {
    file: REVIEWER,
    name: "requestRollbackAction",
    answers: MEMBERS,
    event: "rollback.requested",
    async prepare(s) {
      const { run } = await pendingBatch(s);
      const reason = "The refund went to the wrong card";
      return { params: { runId: run.id }, args: [run.id, reason], missing: [MISSING, reason] };
    },
  },
  {
    file: QUEUES,
    name: "createQueueAction",
    answers: INSTALLATION_ADMINS,
    event: "queue.created",
    prepare: async () => ({ args: [{ name: `made-${unique()}`, requiredApprovals: 2 }] }),
  },
  {
    file: QUEUES,
    name: "updateQueueAction",
    answers: MANAGERS,
    event: "queue.updated",
    prepare: async (s) => ({
      params: { queueId: s.queue.id },
      // approveOnTimeout too: only managers may let agents' batches approve themselves
      args: [s.queue.id, { requiredApprovals: 2, approveOnTimeout: true }],
      missing: [MISSING, { requiredApprovals: 2 }],
    }),
  },
  {
    file: QUEUES,
    name: "archiveQueueAction",
    answers: QUEUE_ADMINS,
    event: "queue.archived",
    prepare: async (s) => ({
      params: { queueId: s.queue.id },
      args: [s.queue.id],
      missing: [MISSING],
    }),
  },
  {
    file: QUEUES,
    name: "addMemberAction",
    answers: MANAGERS,
    event: "member.added",
    async prepare(s) {
      // someone from another queue the same lead leads: a lead adds no one outside their queues
      const [newcomer] = await makeReviewers(1, (await scene()).queue.name);
      const input = { email: newcomer!.email, role: "reviewer" };
      return {
        params: { queueId: s.queue.id },
        args: [s.queue.id, input],
        missing: [MISSING, input],
      };
    },
  },
  {
    file: QUEUES,
    name: "changeRoleAction",
    answers: MANAGERS,
    event: "member.role_changed",
    async prepare(s) {
      const [member] = await makeReviewers(1, s.queue.name);
      return {
        params: { queueId: s.queue.id },
        args: [s.queue.id, member!.id, "lead"],
        missing: [MISSING, member!.id, "lead"],
      };
    },
  },
  {
    file: QUEUES,
    name: "removeMemberAction",
    answers: MANAGERS,
    event: "member.removed",
    async prepare(s) {
      const [member] = await makeReviewers(1, s.queue.name);
      return {
        params: { queueId: s.queue.id },
        args: [s.queue.id, member!.id],
        missing: [MISSING, member!.id],
      };
    },
  },
  {
    file: ROUTING,
    name: "createRuleAction",
    answers: INSTALLATION_ADMINS,
    event: "routing.rule_created",
    prepare: async (s) => ({
      args: [{ name: `rule-${unique()}`, queue: s.queue.name, toolPattern: "refund_*" }],
    }),
  },
  {
    file: ROUTING,
    name: "deleteRuleAction",
    answers: INSTALLATION_ADMINS,
    event: "routing.rule_deleted",
    async prepare(s) {
      const rule = await createRule(OPERATOR, { name: `rule-${unique()}`, queue: s.queue.name });
      return { args: [rule.id] };
    },
  },
  {
    file: ROUTING,
    name: "updateRuleAction",
    answers: INSTALLATION_ADMINS,
    event: "routing.rule_updated",
    async prepare(s) {
      const rule = await createRule(OPERATOR, { name: `rule-${unique()}`, queue: s.queue.name });
      return { args: [rule.id, { toolPattern: "refund_*", enabled: false }] };
    },
  },
  {
    file: ROUTING,
    name: "moveRuleAction",
    answers: INSTALLATION_ADMINS,
    event: "routing.rule_moved",
    async prepare(s) {
      const rule = await createRule(OPERATOR, { name: `rule-${unique()}`, queue: s.queue.name });
      return { args: [rule.id, 0] };
    },
  },
  {
    file: POLICIES,
    name: "createPolicyRuleAction",
    answers: MANAGERS,
    event: "policy.rule_created",
    prepare: async (s) => {
      const rule = (queue: string) => ({ name: `rule-${unique()}`, queue, effect: "deny" });
      return { args: [rule(s.queue.id)], missing: [rule(MISSING)] };
    },
  },
  {
    file: POLICIES,
    name: "updatePolicyRuleAction",
    answers: MANAGERS,
    event: "policy.rule_updated",
    async prepare(s) {
      const rule = await queueRule(s);
      return { args: [rule.id, { enabled: false }], missing: [MISSING, { enabled: false }] };
    },
  },
  {
    file: POLICIES,
    name: "movePolicyRuleAction",
    answers: MANAGERS,
    event: "policy.rule_moved",
    async prepare(s) {
      const rule = await queueRule(s);
      return { args: [rule.id, 0], missing: [MISSING, 0] };
    },
  },
  {
    file: POLICIES,
    name: "deletePolicyRuleAction",
    answers: MANAGERS,
    event: "policy.rule_deleted",
    async prepare(s) {
      const rule = await queueRule(s);
      return { args: [rule.id], missing: [MISSING] };
    },
  },
  {
    file: POLICIES,
    name: "backtestPolicyAction",
    answers: MANAGERS,
    event: null,
    prepare: async (s) => {
      const trial = (queue: string) => ({
        rule: { name: "trial", queue, effect: "allow", toolPattern: "refund_*" },
      });
      return { args: [trial(s.queue.id)], missing: [trial(MISSING)] };
    },
  },
  {
    file: POLICIES,
    name: "dismissSuggestionAction",
    answers: MANAGERS,
    event: "policy.suggestion_dismissed",
    prepare: async (s) => {
      const dismissal = (queue: string) => ({
        queue,
        suggestionId: "a".repeat(32),
        fingerprint: "b".repeat(32),
      });
      return { args: [dismissal(s.queue.id)], missing: [dismissal(MISSING)] };
    },
  },
  {
    file: POLICIES,
    name: "tryPolicyAction",
    answers: READERS,
    event: null,
    async prepare(s) {
      await queueRule(s);
      const trial = (queue: string) => ({ queue, call: { toolName: "read_file", args: {} } });
      return { args: [trial(s.queue.id)], missing: [trial(MISSING)] };
    },
  },
  {
    file: POLICIES,
    name: "setAgentModeAction",
    answers: INSTALLATION_ADMINS,
    event: "agent.mode_changed",
    async prepare(s) {
      const agent = await makeAgentKey({ queues: [s.queue.name] });
      return { args: [agent.id, "deny"], missing: [MISSING, "deny"] };
    },
  },
  {
    file: AGENTS,
    name: "createAgentKeyAction",
    // a lead of another queue cannot give a key this queue: to them it is no queue they manage
    answers: { ...MANAGERS, outsider: "invalid_request" },
    event: "agent.created",
    prepare: async (s) => {
      const key = (queue: string) => ({ name: `agent-${unique()}`, defaultQueue: queue });
      return { args: [key(s.queue.id)] };
    },
  },
  {
    file: AGENTS,
    name: "rotateAgentKeyAction",
    answers: MANAGERS,
    event: "agent.rotated",
    async prepare(s) {
      const agent = await makeAgentKey({ queues: [s.queue.name] });
      return {
        args: [agent.id, { graceSecs: 60 }],
        missing: [MISSING, { graceSecs: 60 }],
      };
    },
  },
  {
    file: AGENTS,
    name: "revokeAgentKeyAction",
    answers: MANAGERS,
    event: "agent.revoked",
    async prepare(s) {
      const agent = await makeAgentKey({ queues: [s.queue.name] });
      return { args: [agent.id], missing: [MISSING] };
    },
  },
  {
    file: TOKENS,
    name: "createReviewerTokenAction",
    answers: SIGNED_IN,
    event: "reviewer_token.created",
    prepare: async () => ({ args: [] }),
  },
  {
    file: TOKENS,
    name: "revokeReviewerTokenAction",
    // someone else's token: only an installation admin may revoke it; to others it does not exist
    answers: { ...MANAGERS, reviewer: "not_found", lead: "not_found" },
    event: "reviewer_token.revoked",
    async prepare(s) {
      const [someone] = await makeReviewers(1, s.queue.name);
      const [token] = await getDb()
        .select({ id: reviewerTokens.id })
        .from(reviewerTokens)
        .where(eq(reviewerTokens.userId, someone!.id));
      return { args: [token!.id], missing: [MISSING] };
    },
  },
  {
    file: TOKENS,
    name: "signOutEverywhereAction",
    answers: SIGNED_IN,
    event: "session.signed_out_everywhere",
    prepare: async () => ({ args: [{ revokeTokens: false }] }),
    async after(caller) {
      if (caller !== "signed out")
        people[caller].cookie = await sessionCookie(server.baseUrl, people[caller].email);
    },
  },
  {
    file: PEOPLE,
    name: "invitePersonAction",
    answers: PEOPLE_MANAGERS,
    event: "person.invited",
    prepare: async (s) => ({
      args: [
        {
          email: `invitee-${unique()}@example.com`,
          name: "Ivy Invitee",
          queues: [{ queueId: s.queue.id, role: "reviewer" }],
        },
      ],
    }),
  },
  {
    file: PEOPLE,
    name: "updatePersonAction",
    answers: PEOPLE_ADMINS,
    event: "person.renamed",
    async prepare(s) {
      const [someone] = await makeReviewers(1, s.queue.name);
      return { args: [someone!.id, { name: `Renamed ${unique()}` }] };
    },
  },
  {
    file: PEOPLE,
    name: "passwordResetAction",
    // a lead of another queue: to them this queue's member does not exist
    answers: { ...MANAGERS, outsider: "not_found" },
    event: "person.password_reset_issued",
    async prepare(s) {
      const [someone] = await makeReviewers(1, s.queue.name);
      return { args: [someone!.id], missing: [MISSING] };
    },
  },
  {
    file: NOTIFICATIONS,
    name: "saveNotificationPreferenceAction",
    // one's own preferences, in one's own queues: another queue does not exist for them
    answers: MEMBERS,
    event: "notifications.preferences_updated",
    prepare: async (s) => {
      const preference = {
        delivery: "digest",
        digestMinutes: 30,
        events: { newCards: true, deadlines: false, escalations: true, decisions: true },
      };
      return { args: [s.queue.id, preference], missing: [MISSING, preference] };
    },
  },
  {
    file: SSO,
    name: "saveSsoSettingsAction",
    // installation-wide: admins only, and nothing to hide
    answers: INSTALLATION_ADMINS,
    event: "sso.settings_updated",
    prepare: async () => ({
      args: [
        {
          enabled: true,
          displayName: "Acme SSO",
          issuer: idp.issuer,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
        },
      ],
    }),
  },
  // hosted MCP gateways (issue 25): installation-wide, admins only, nothing to hide
  {
    file: GATEWAYS,
    name: "createMcpGatewayAction",
    answers: INSTALLATION_ADMINS,
    event: "mcp_gateway.created",
    prepare: async () => ({
      args: [
        { name: `g-${unique()}`, url: "http://127.0.0.1:9/mcp", headers: { "X-Key": "k-123456" } },
      ],
    }),
  },
  {
    file: GATEWAYS,
    name: "editMcpGatewayAction",
    answers: INSTALLATION_ADMINS,
    event: "mcp_gateway.updated",
    async prepare() {
      const { gateway } = await newGateway();
      const edit = { expectedRevision: gateway.revision, url: "http://93.184.215.14/v2/mcp" };
      return { args: [gateway.id, edit], missing: [MISSING, edit] };
    },
  },
  {
    file: GATEWAYS,
    name: "disableMcpGatewayAction",
    answers: INSTALLATION_ADMINS,
    event: "mcp_gateway.disabled",
    async prepare() {
      const { gateway } = await newGateway();
      return { args: [gateway.id], missing: [MISSING] };
    },
  },
  {
    file: SETTINGS,
    name: "saveMySettingsAction",
    // one's own settings: anyone signed in, and there is no way to name someone else
    answers: SIGNED_IN,
    event: "person.settings_updated",
    // each caller's first zone of their own, so a change (saving the same zone again writes nothing)
    prepare: async () => ({ args: [{ timeZone: "Asia/Kolkata" }] }),
  },
  {
    file: LINKS,
    name: "redeemLinkAction",
    // Public: the one-time token is the authority, so a wrong one is refused for everyone (the
    // granted path, a real link, is test/api/people.test.ts's and e2e/people.spec.ts's).
    answers: Object.fromEntries(CALLERS.map((c) => [c, "not_found"])) as Record<Caller, Answer>,
    event: null,
    prepare: async () => ({
      params: { token: "cs_link_wrong" },
      args: [{ token: `cs_link_${unique()}`, password: "correct horse battery" }],
    }),
  },
  {
    file: SETUP,
    name: "createFirstAdminAction",
    answers: NOBODY,
    event: null,
    prepare: async () => ({
      args: [
        {
          name: "Mallory",
          email: `mallory-${unique()}@example.com`,
          password: "correct horse battery",
          setupCode: "0000-0000-0000-0000",
        },
      ],
    }),
  },
];

async function invoke(
  actionCase: ActionCase,
  call: Call,
  caller: Caller,
  args = call.args,
  headers: Record<string, string> = {},
) {
  const action = findServerAction(actions, actionCase.file, actionCase.name);
  return invokeServerAction(
    server.baseUrl,
    action,
    actionPagePath(action, call.params),
    args,
    caller === "signed out" ? headers : { cookie: people[caller].cookie, ...headers },
  );
}

it("covers every server action of the build", () => {
  const built = actions.map((a) => `${a.filename}#${a.exportedName}`).sort();
  expect(built).toEqual(cases.map((c) => `${c.file}#${c.name}`).sort());
});

describe.each(cases.map((c) => [c.name, c] as const))("%s", (_name, actionCase) => {
  it.each(CALLERS)("as %s", async (caller) => {
    const expected = actionCase.answers[caller];
    const call = await actionCase.prepare(await scene(), caller);
    const before = await everything();
    const answer = await invoke(actionCase, call, caller);
    const after = await everything();
    await actionCase.after?.(caller);

    expect(answer.status, answer.raw).toBe(200);
    if (expected === "ok") {
      expect(answer.result, answer.raw).toMatchObject({ ok: true });
      if (actionCase.event === null) {
        expect(after, "a call that only reads writes nothing").toEqual(before);
        return;
      }
      const written = await getDb()
        .select({ type: events.type, actorId: events.actorId })
        .from(events)
        .where(gt(events.seq, before.counts.lastSeq ?? 0));
      expect(written).toContainEqual({
        type: actionCase.event,
        actorId: people[caller as Person].id,
      });
      return;
    }
    expect(answer.result, answer.raw).toMatchObject({ ok: false, code: expected });
    expect(after, "a refused call writes nothing").toEqual(before);

    // Another queue's thing and no thing at all must be told apart by nothing.
    if (expected === "not_found" && call.missing) {
      const nothing = await invoke(actionCase, call, caller, call.missing);
      expect(answer.result).toEqual(nothing.result);
      expect(await everything()).toEqual(before);
    }
  });
});

describe("a cross-site call", () => {
  it.each(cases.map((c) => [c.name, c] as const))(
    "to %s is refused with a 403 and writes nothing",
    async (_name, actionCase) => {
      // The caller the matrix grants, so only the origin stands in the way.
      const caller = CALLERS.find((c) => actionCase.answers[c] === "ok") ?? "admin";
      const call = await actionCase.prepare(await scene(), caller);
      const before = await everything();
      const answer = await invoke(actionCase, call, caller, call.args, {
        origin: "https://evil.example",
      });
      // Refused before Next runs anything: a plain 403, no error digest or stack (issue 14, 8c).
      expect(answer.status, answer.raw).toBe(403);
      expect(answer.result).toBeUndefined();
      expect(answer.thrown).toBeUndefined();
      expect(answer.raw).toMatch(/^Forbidden: another site/);
      expect(answer.raw).not.toMatch(/digest|at \w+ \(/);
      expect(await everything()).toEqual(before);
    },
  );
});

describe("a lead", () => {
  // Leads manage reviewers and leads; the admin role is given and taken by admins alone.
  const attempts: {
    what: string;
    action: string;
    /** `someone`: a reviewer of the queue, or for addMemberAction an account not yet in it */
    args: (s: Scene, someone: TestReviewer) => unknown[];
  }[] = [
    {
      what: "add someone as admin",
      action: "addMemberAction",
      args: (s, someone) => [s.queue.id, { email: someone.email, role: "admin" }],
    },
    {
      what: "make a reviewer admin",
      action: "changeRoleAction",
      args: (s, someone) => [s.queue.id, someone.id, "admin"],
    },
    {
      what: "make themselves admin",
      action: "changeRoleAction",
      args: (s) => [s.queue.id, people.lead.id, "admin"],
    },
    {
      what: "demote the queue's admin",
      action: "changeRoleAction",
      args: (s) => [s.queue.id, people.admin.id, "reviewer"],
    },
    {
      what: "remove the queue's admin",
      action: "removeMemberAction",
      args: (s) => [s.queue.id, people.admin.id],
    },
  ];

  it.each(attempts.map((a) => [a.what, a] as const))("cannot %s", async (_what, attempt) => {
    const s = await scene();
    const inQueue = attempt.action !== "addMemberAction";
    const [someone] = await makeReviewers(1, inQueue ? s.queue.name : null);
    const actionCase = cases.find((c) => c.file === QUEUES && c.name === attempt.action)!;
    const call = { params: { queueId: s.queue.id }, args: attempt.args(s, someone!) };
    const before = await everything();
    const answer = await invoke(actionCase, call, "lead");
    expect(answer.result, answer.raw).toMatchObject({ ok: false, code: "forbidden" });
    expect(await everything()).toEqual(before);
  });
});
