import { beforeAll, describe, expect, it } from "vitest";
import { getClient, getDb } from "@/db/client";
import { decideCall } from "@/lib/approvals/decide-call";
import { authenticate, type Actor } from "@/lib/auth/actor";
import { expireBatch } from "@/lib/batches/expire-batch";
import { backtestPolicy } from "@/lib/policies/backtest-policy";
import { createPolicyRule } from "@/lib/policies/create-policy-rule";
import { dismissSuggestion } from "@/lib/policies/dismiss-suggestion";
import { listPolicySuggestions } from "@/lib/policies/suggest-policies";
import { OPERATOR } from "@/lib/queues/queue-access";
import { claimRun } from "@/lib/runs/claim-run";
import { createRun } from "@/lib/runs/create-run";
import { createBatch } from "@/lib/batches/create-batch";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// The backtest and the mined suggestions against a brute-force recount written here, apart from
// lib/policies: a history made through the real verbs (two agents, five tools, numbers, paths and
// lists in the args, approvals as asked, edits, rejections, expiries, a quorum of two on every
// call, calls an existing policy settled and calls a remembered approval settled), then every
// number recounted straight from the rows with a matcher of its own.

// The expired card was settled a few minutes ahead of the clock (expireBatch was told a later
// "now"): periods that must hold every card end an hour from now.
const LATER = new Date(Date.now() + 3600_000).toISOString();

type Person = { actor: Actor; id: string; name: string };
let queueId: string;
let queueName: string;
let agents: { id: string; name: string; actor: Actor }[];
let dana: Person;
let sam: Person;
let lee: Person;
let lead: Actor;
let outsider: Actor;

const actorOf = (token: string) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));

async function pause(
  agent: Actor,
  calls: { toolName: string; args: Record<string, unknown> }[],
  options: { runId?: string; timeoutSecs?: number } = {},
) {
  const batch = {
    calls: calls.map((c, i) => ({ toolCallId: `t${i}`, ...c })),
    timeoutSecs: options.timeoutSecs,
  };
  if (options.runId) {
    // the run is ready (its last batch settled): claim it, then pause it again
    const { claimToken } = await claimRun(agent, options.runId, { workerId: "w" });
    return (await createBatch(agent, options.runId, { ...batch, claimToken })).batch;
  }
  const { run } = await createRun(agent, { batch });
  return run.batches![0]!;
}

type Decision = "approve" | "reject" | "edit";

/** Decides every pending call of the batch: a quorum of two (`edit` then an approval). */
async function decide(batch: Awaited<ReturnType<typeof pause>>, outcomes: Decision[]) {
  for (const [i, call] of batch.calls.entries()) {
    if (call.status !== "pending") continue;
    const outcome = outcomes[i] ?? outcomes[0]!;
    if (outcome === "reject") {
      await decideCall(dana.actor, call.id, {
        outcome: "reject",
        expectedRevision: call.revision,
        reason: `No: ${call.toolName} ${i}`,
      });
      continue;
    }
    const first =
      outcome === "edit"
        ? await decideCall(sam.actor, call.id, {
            outcome: "edit",
            expectedRevision: call.revision,
            editedArgs: { ...call.args, edited: true },
            reason: "Changed it",
          })
        : await decideCall(sam.actor, call.id, {
            outcome: "approve",
            expectedRevision: call.revision,
          });
    await decideCall(lee.actor, call.id, {
      outcome: "approve",
      expectedRevision: first.call.revision,
      reason: "Fine",
    });
  }
}

beforeAll(async () => {
  await freshDatabase("backtest");
  const queue = await makeQueue({ requiredApprovals: 2 });
  queueId = queue.id;
  queueName = queue.name;
  const people = [];
  for (const name of ["Dana", "Sam", "Lee"]) {
    const person = await makeReviewer({ name, queues: [{ name: queue.name }] });
    people.push({ actor: await actorOf(person.token), id: person.id, name });
  }
  [dana, sam, lee] = people as [Person, Person, Person];
  lead = await actorOf(
    (await makeReviewer({ queues: [{ name: queue.name, role: "lead" }] })).token,
  );
  outsider = await actorOf((await makeReviewer({ queues: [{ name: queue.name }] })).token);
  agents = [];
  for (const name of ["Billing bot", "Files bot"]) {
    const key = await makeAgentKey({ name, queues: [queue.name] });
    agents.push({ id: key.id, name, actor: await actorOf(key.key) });
  }
  const [billing, files] = agents as [(typeof agents)[0], (typeof agents)[0]];
  await createPolicyRule(OPERATOR, {
    queue: queue.id,
    name: "Reads are fine",
    effect: "allow",
    toolPattern: "read_file",
  });

  // refunds: 24 small ones approved as asked, bigger ones rejected or edited
  for (let i = 0; i < 24; i++)
    await decide(
      await pause(billing.actor, [
        { toolName: "refund_order", args: { amount: 5 + (i % 16), currency: "EUR" } },
      ]),
      ["approve"],
    );
  for (const amount of [50, 80])
    await decide(await pause(billing.actor, [{ toolName: "refund_order", args: { amount } }]), [
      "reject",
    ]);
  await decide(await pause(billing.actor, [{ toolName: "refund_order", args: { amount: 35 } }]), [
    "edit",
  ]);
  // Files bot refunds too, rarely: approved, but too few for a suggestion
  for (let i = 0; i < 3; i++)
    await decide(await pause(files.actor, [{ toolName: "refund_order", args: { amount: 10 } }]), [
      "approve",
    ]);
  // writes: under /scratch/ approved, under /output/ rejected, one left to its deadline
  for (let i = 0; i < 22; i++)
    await decide(
      await pause(files.actor, [
        { toolName: "write_file", args: { path: `/scratch/run-${i % 3}/out-${i}.txt` } },
      ]),
      ["approve"],
    );
  await decide(
    await pause(files.actor, [{ toolName: "write_file", args: { path: "/output/a.csv" } }]),
    ["reject"],
  );
  const late = await pause(
    files.actor,
    [{ toolName: "write_file", args: { path: "/output/tmp/b" } }],
    {
      timeoutSecs: 60,
    },
  );
  await expireBatch(late.id, Date.now() + 120_000);
  // one path climbing out of /scratch/: normalized, it is under /output/ (and was rejected)
  await decide(
    await pause(files.actor, [{ toolName: "write_file", args: { path: "/scratch/../output/c" } }]),
    ["reject"],
  );
  // emails: every one approved as asked; the first one remembered for its run
  const first = await pause(billing.actor, [
    { toolName: "send_email", args: { to: "a@example.com" } },
  ]);
  await decideCall(sam.actor, first.calls[0]!.id, {
    outcome: "approve",
    expectedRevision: 1,
    scope: "run",
  });
  const remembered = await decideCall(lee.actor, first.calls[0]!.id, {
    outcome: "approve",
    expectedRevision: 1,
    scope: "run",
  });
  for (let i = 0; i < 3; i++)
    await pause(billing.actor, [{ toolName: "send_email", args: { to: "a@example.com" } }], {
      runId: remembered.batch.runId,
    });
  for (let i = 0; i < 21; i++)
    await decide(
      await pause(billing.actor, [{ toolName: "send_email", args: { to: `c${i}@example.com` } }]),
      ["approve"],
    );
  // reads: settled by the policy, never by a person (25 of them: not evidence)
  for (let i = 0; i < 25; i++)
    await pause(files.actor, [{ toolName: "read_file", args: { path: `/x/${i}` } }]);
  // lists, and cards of several calls (a small refund beside a write under /output/)
  for (const outcome of ["approve", "reject", "approve"] as const)
    await decide(
      await pause(files.actor, [
        { toolName: "delete_files", args: { paths: ["/tmp/a", "/tmp/b"] } },
      ]),
      [outcome],
    );
  await decide(
    await pause(billing.actor, [
      { toolName: "refund_order", args: { amount: 12 } },
      { toolName: "write_file", args: { path: "/output/z" } },
    ]),
    ["approve", "reject"],
  );
  await decide(
    await pause(billing.actor, [
      { toolName: "refund_order", args: { amount: 7 } },
      { toolName: "send_email", args: { to: "z@example.com" } },
    ]),
    ["approve", "approve"],
  );
}, 120_000);

/* ------------------------------------------------------------------ the brute-force recount */

type RawCall = {
  id: string;
  batchId: string;
  batchStatus: string;
  batchCreatedAt: number;
  batchDecidedAt: number;
  agentId: string;
  tool: string;
  args: Record<string, unknown>;
  source: string | null;
  outcome: string | null;
  edited: boolean;
  reason: string | null;
};

async function rawHistory(): Promise<RawCall[]> {
  const { rows } = await getClient().execute({
    sql: `select c.id, c.batch_id, b.status as batch_status, b.created_at, b.decided_at, r.agent_key_id,
            c.tool_name, c.args, c.decision_source, c.decision_outcome, c.edited_args, c.decision_reason
          from calls c join batches b on b.id = c.batch_id join runs r on r.id = b.run_id
          where b.queue_id = ?`,
    args: [queueId],
  });
  return rows.map((r) => ({
    id: String(r.id),
    batchId: String(r.batch_id),
    batchStatus: String(r.batch_status),
    batchCreatedAt: Number(r.created_at),
    batchDecidedAt: Number(r.decided_at),
    agentId: String(r.agent_key_id),
    tool: String(r.tool_name),
    args: JSON.parse(String(r.args)),
    source: r.decision_source as string | null,
    outcome: r.decision_outcome as string | null,
    edited: r.edited_args !== null,
    reason: r.decision_reason as string | null,
  }));
}

type Kind = "approved" | "edited" | "rejected" | "expired";
function kindOf(c: RawCall): Kind | "policy" | "memory" | null {
  if (c.source === "timeout") return "expired";
  if (c.source === "reviewer")
    return c.outcome === "rejected" ? "rejected" : c.edited ? "edited" : "approved";
  if (c.source === "policy" || c.source === "memory") return c.source;
  return null;
}

type SimpleRule = {
  effect: "allow" | "deny";
  agentId?: string;
  tool?: string;
  atMost?: [string, number];
  prefix?: [string, string];
};

function normalize(path: string): string {
  const out: string[] = [];
  for (const part of path.split("/").slice(1)) {
    if (part === "..") out.pop();
    else if (part !== "." && part !== "") out.push(part);
  }
  return `/${out.join("/")}${path.endsWith("/") ? "/" : ""}`;
}

function holds(rule: SimpleRule, c: RawCall): boolean {
  if (rule.agentId && rule.agentId !== c.agentId) return false;
  if (rule.tool && rule.tool !== c.tool) return false;
  if (rule.atMost) {
    const v = c.args[rule.atMost[0]];
    if (typeof v !== "number" || v > rule.atMost[1]) return false;
  }
  if (rule.prefix) {
    const v = c.args[rule.prefix[0]];
    if (typeof v !== "string" || !v.startsWith("/") || !normalize(v).startsWith(rule.prefix[1]))
      return false;
  }
  return true;
}

function recount(rule: SimpleRule, calls: RawCall[]) {
  const tally = { matched: 0, approved: 0, edited: 0, rejected: 0, expired: 0, overturned: 0 };
  const overturned: string[] = [];
  const notEvidence = { policy: 0, memory: 0 };
  const byBatch = new Map<string, RawCall[]>();
  for (const c of calls) byBatch.set(c.batchId, [...(byBatch.get(c.batchId) ?? []), c]);
  let cards = 0;
  let savedMs = 0;
  for (const batchCalls of byBatch.values()) {
    if (!["decided", "expired"].includes(batchCalls[0]!.batchStatus)) continue;
    const waiting = batchCalls.filter((c) =>
      ["approved", "edited", "rejected", "expired"].includes(kindOf(c) ?? ""),
    );
    for (const c of batchCalls) {
      const kind = kindOf(c);
      if (!kind || !holds(rule, c)) continue;
      if (kind === "policy" || kind === "memory") {
        // the only enabled rule is an allow rule for read_file: never stronger than the candidate
        notEvidence[kind]++;
        continue;
      }
      tally.matched++;
      tally[kind]++;
      const flips =
        rule.effect === "allow" ? kind === "rejected" : kind === "approved" || kind === "edited";
      if (flips) {
        tally.overturned++;
        overturned.push(c.id);
      }
    }
    if (waiting.length > 0 && waiting.every((c) => holds(rule, c))) {
      cards++;
      if (batchCalls[0]!.batchStatus === "decided")
        savedMs += batchCalls[0]!.batchDecidedAt - batchCalls[0]!.batchCreatedAt;
    }
  }
  return { tally, overturned: overturned.sort(), notEvidence, cards, savedMs };
}

function toInput(rule: SimpleRule) {
  return {
    name: "Trial",
    queue: queueId,
    effect: rule.effect,
    agent: rule.agentId ?? null,
    toolPattern: rule.tool ?? null,
    argPredicates: [
      ...(rule.atMost
        ? [{ path: rule.atMost[0], op: "atMost" as const, value: rule.atMost[1] }]
        : []),
      ...(rule.prefix
        ? [{ path: rule.prefix[0], op: "prefix" as const, value: rule.prefix[1] }]
        : []),
    ],
  };
}

describe("backtest", () => {
  it("agrees with the recount for every kind of rule", async () => {
    const calls = await rawHistory();
    const [billing, files] = agents as [(typeof agents)[0], (typeof agents)[0]];
    const rules: SimpleRule[] = [
      { effect: "allow", tool: "refund_order" },
      { effect: "allow", agentId: billing.id, tool: "refund_order", atMost: ["amount", 20] },
      { effect: "allow", agentId: billing.id, tool: "refund_order", atMost: ["amount", 40] },
      { effect: "deny", tool: "refund_order" },
      { effect: "allow", tool: "write_file", prefix: ["path", "/scratch/"] },
      { effect: "allow", tool: "write_file", prefix: ["path", "/output/"] },
      { effect: "deny", agentId: files.id },
      { effect: "allow", tool: "send_email" },
      { effect: "allow", tool: "read_file" },
      { effect: "allow", agentId: billing.id },
    ];
    for (const rule of rules) {
      const expected = recount(rule, calls);
      const report = await backtestPolicy(lead, { rule: toInput(rule), to: LATER });
      const label = JSON.stringify(rule);
      expect(report.calls, label).toEqual(expected.tally);
      expect(report.notEvidence, label).toEqual(expected.notEvidence);
      expect(report.cards, label).toEqual({ settled: expected.cards, savedMs: expected.savedMs });
      expect(report.overturned.decisions.map((d) => d.callId).sort(), label).toEqual(
        expected.overturned,
      );
      // the breakdowns add up to the whole
      const sum = (rows: { matched: number }[]) => rows.reduce((n, r) => n + r.matched, 0);
      expect(sum(report.byAgent), label).toBe(expected.tally.matched);
      expect(sum(report.byTool), label).toBe(expected.tally.matched);
    }
    // sanity: the history holds what the recount is meant to see
    const all = recount({ effect: "allow" }, calls);
    expect(all.notEvidence).toEqual({ policy: 25, memory: 3 });
    expect(all.tally.expired).toBe(1);
    expect(all.tally.edited).toBe(1);
  });

  it("names who decided an overturned call: every vote of a quorum, or the rejection, with the reason", async () => {
    const report = await backtestPolicy(lead, {
      rule: { name: "x", queue: queueId, effect: "deny", toolPattern: "send_email" },
    });
    expect(report.overturned.count).toBe(23);
    for (const d of report.overturned.decisions)
      expect(d.deciders.map((p) => p.name).sort()).toEqual(["Lee", "Sam"]);
    const allow = await backtestPolicy(lead, {
      rule: { name: "x", queue: queueId, effect: "allow", toolPattern: "delete_files" },
    });
    expect(allow.overturned.decisions).toHaveLength(1);
    expect(allow.overturned.decisions[0]).toMatchObject({
      outcome: "rejected",
      deciders: [{ name: "Dana" }],
      reason: "No: delete_files 0",
    });
    expect(allow.summary).toBe("would have approved 3 cards (3 calls), overturning 1 decision");
  });

  it("is the rule's creator's to run: a reviewer is refused, an outsider of the queue too", async () => {
    const body = {
      rule: { name: "x", queue: queueId, effect: "allow", toolPattern: "send_email" },
    };
    await expect(backtestPolicy(outsider, body)).rejects.toMatchObject({ status: 403 });
    await expect(backtestPolicy(dana.actor, body)).rejects.toMatchObject({ status: 403 });
    await expect(
      backtestPolicy(lead, { rule: { ...body.rule, queue: null } }),
    ).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      backtestPolicy(lead, { ...body, from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("reads only the period asked", async () => {
    const report = await backtestPolicy(lead, {
      rule: { name: "x", queue: queueId, effect: "allow", toolPattern: "*" },
      from: "2020-01-01T00:00:00Z",
      to: "2020-02-01T00:00:00Z",
    });
    expect(report.calls.matched).toBe(0);
  });
});

/* ------------------------------------------------------------------ suggestions */

/** Every allow rule of the brute-force space that the history supports, widest per argument. */
function expectedSuggestions(calls: RawCall[], minApprovals: number) {
  const human = calls.filter((c) =>
    ["approved", "edited", "rejected", "expired"].includes(kindOf(c) ?? ""),
  );
  const groups = new Map<string, RawCall[]>();
  for (const c of human)
    groups.set(`${c.agentId} ${c.tool}`, [...(groups.get(`${c.agentId} ${c.tool}`) ?? []), c]);
  const supported = (rule: SimpleRule) => {
    const matched = human.filter((c) => holds(rule, c));
    const approved = matched.filter((c) => kindOf(c) === "approved").length;
    return matched.length === approved && approved >= minApprovals ? approved : null;
  };
  const found: { agentId: string; tool: string; predicate: string; approved: number }[] = [];
  for (const group of groups.values()) {
    const { agentId, tool } = group[0]!;
    const whole = supported({ effect: "allow", agentId, tool });
    if (whole !== null) {
      found.push({ agentId, tool, predicate: "", approved: whole });
      continue;
    }
    const keys = [...new Set(group.flatMap((c) => Object.keys(c.args)))];
    for (const key of keys) {
      // every number seen is a possible bound; the largest supported one is the suggestion
      const bounds = [
        ...new Set(group.map((c) => c.args[key]).filter((v): v is number => typeof v === "number")),
      ]
        .map((v) => ({ v, n: supported({ effect: "allow", agentId, tool, atMost: [key, v] }) }))
        .filter((b) => b.n !== null)
        .sort((a, b) => b.v - a.v);
      if (bounds[0])
        found.push({
          agentId,
          tool,
          predicate: `${key} atMost ${bounds[0].v}`,
          approved: bounds[0].n!,
        });
      // every directory of every path seen; the supported ones no supported directory contains
      const dirs = new Set<string>();
      for (const c of group) {
        const v = c.args[key];
        if (typeof v !== "string" || !v.startsWith("/")) continue;
        const parts = normalize(v).split("/");
        for (let i = 2; i < parts.length; i++) dirs.add(`${parts.slice(0, i).join("/")}/`);
      }
      const ok = [...dirs]
        .map((d) => ({ d, n: supported({ effect: "allow", agentId, tool, prefix: [key, d] }) }))
        .filter((x) => x.n !== null);
      for (const x of ok)
        if (!ok.some((y) => y.d !== x.d && x.d.startsWith(y.d)))
          found.push({ agentId, tool, predicate: `${key} prefix ${x.d}`, approved: x.n! });
    }
  }
  return found.map((f) => `${f.agentId} ${f.tool} [${f.predicate}] ${f.approved}`).sort();
}

describe("suggestions", () => {
  const shown = (s: {
    agent: { id: string };
    toolName: string;
    argPredicates: { path: string; op: string; value: unknown }[];
    backtest: { calls: { approved: number } };
  }) =>
    `${s.agent.id} ${s.toolName} [${s.argPredicates.map((p) => `${p.path} ${p.op} ${String(p.value)}`).join("")}] ${s.backtest.calls.approved}`;

  it("agrees with the brute-force search, for several thresholds", async () => {
    const calls = await rawHistory();
    for (const minApprovals of [3, 10, 20, 23, 30]) {
      const answer = await listPolicySuggestions(lead, { queue: queueId, minApprovals, to: LATER });
      expect(answer.suggestions.map(shown).sort(), `minApprovals ${minApprovals}`).toEqual(
        expectedSuggestions(calls, minApprovals),
      );
      for (const s of answer.suggestions) {
        expect(s.backtest.overturned.count).toBe(0);
        expect(s.backtest.calls.rejected + s.backtest.calls.edited + s.backtest.calls.expired).toBe(
          0,
        );
      }
    }
    const byDefault = await listPolicySuggestions(lead, { queue: queueName });
    expect(byDefault.suggestions.map((s) => s.rule.name).sort()).toEqual([
      "Allow refund_order from Billing bot where amount is at most 20",
      "Allow send_email from Billing bot",
      'Allow write_file from Files bot where path starts with "/scratch/"',
    ]);
  });

  it("creates as offered, and stays dismissed until the evidence changes", async () => {
    const before = await listPolicySuggestions(lead, { queue: queueId });
    const refund = before.suggestions.find((s) => s.toolName === "refund_order")!;
    await dismissSuggestion(lead, {
      queue: queueId,
      suggestionId: refund.id,
      fingerprint: refund.fingerprint,
    });
    const after = await listPolicySuggestions(lead, { queue: queueId });
    expect(after.suggestions.map((s) => s.id)).not.toContain(refund.id);
    expect(after.dismissed).toBe(1);
    // a lower threshold does not bring it back; more evidence (another bound) does
    const wider = await listPolicySuggestions(lead, { queue: queueId, minApprovals: 3 });
    expect(wider.suggestions.map((s) => s.id)).not.toContain(refund.id);
    await dismissSuggestion(lead, {
      queue: queueId,
      suggestionId: refund.id,
      fingerprint: "0".repeat(32),
    });
    expect(
      (await listPolicySuggestions(lead, { queue: queueId })).suggestions.map((s) => s.id),
    ).toContain(refund.id);

    // creating the email suggestion (off) takes it off the list
    const email = before.suggestions.find((s) => s.toolName === "send_email")!;
    await createPolicyRule(lead, { ...email.rule, enabled: true });
    const later = await listPolicySuggestions(lead, { queue: queueId });
    expect(later.suggestions.map((s) => s.id)).not.toContain(email.id);
  });

  it("is for leads and admins", async () => {
    await expect(listPolicySuggestions(dana.actor, { queue: queueId })).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      dismissSuggestion(dana.actor, {
        queue: queueId,
        suggestionId: "a".repeat(32),
        fingerprint: "b".repeat(32),
      }),
    ).rejects.toMatchObject({ status: 403 });
    await expect(listPolicySuggestions(OPERATOR, { queue: queueId })).resolves.toBeTruthy();
  });
});
