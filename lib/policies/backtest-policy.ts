import { eq, inArray, or } from "drizzle-orm";
import { getDb, type Executor } from "@/db/client";
import { agentKeys, queues, type PolicyRule } from "@/db/schema";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { parseInput } from "@/lib/input/parse";
import { InvalidRequestError, NotFoundError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";
import { findManagedQueue, managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { backtestRuleAsync, type RuleTrial, type Tally } from "./backtest-rule";
import { describeConditions, rulesForQueue } from "./list-policy-rules";
import { writableScope } from "./policy-access";
import { decidersOf, decisionsOf, readPolicyHistory } from "./policy-history";
import { PolicyBacktestInput, periodOf, type PolicyRuleInput } from "./policy-input";

// `POST /policy-rules/backtest`: what a rule would have done to a queue's history before it is
// saved (backtest-rule.ts says how it counts). Writes nothing. Who may create the rule may
// backtest it, on the history of a queue they lead (an admin: any).

/** Overturned decisions listed in full; beyond this many the answer says how many more. */
export const MAX_LISTED_OVERTURNS = 500;

export type BacktestReport = Awaited<ReturnType<typeof backtestPolicy>>;

/** A queue (id or name) the caller leads, or 404/403 as the queue pages answer. */
export async function managedHistoryQueue(
  db: Executor,
  caller: QueueCaller,
  queue: string,
): Promise<{ id: string; name: string }> {
  const manager = await managerOf(db, caller);
  const [found] = await db
    .select({ id: queues.id, name: queues.name })
    .from(queues)
    .where(or(eq(queues.id, queue), eq(queues.name, queue)));
  if (!found) throw new NotFoundError("Queue");
  await findManagedQueue(db, manager, found.id);
  return found;
}

/** The candidate as a stored rule would be: what the matcher takes. */
export function candidateRule(
  input: PolicyRuleInput,
  ids: { id: string; queueId: string | null; agentKeyId: string | null },
): PolicyRule {
  const now = Date.now();
  return {
    id: ids.id,
    name: input.name,
    queueId: ids.queueId,
    // a new rule goes at the end of its list
    position: Number.MAX_SAFE_INTEGER,
    enabled: true,
    effect: input.effect,
    agentKeyId: ids.agentKeyId,
    toolPattern: input.toolPattern ?? null,
    argPredicates: input.argPredicates,
    costAbove: input.costAbove ?? null,
    reason: input.reason || null,
    createdAt: now,
    updatedAt: now,
  };
}

export async function backtestPolicy(caller: QueueCaller, body: unknown) {
  const input = parseInput(PolicyBacktestInput, body);
  const db = getDb();
  const manager = await managerOf(db, caller);
  // the authorization of creating this very rule
  const scope = await writableScope(db, manager, input.rule.queue);
  const historyOf = input.queue ?? input.rule.queue;
  if (!historyOf)
    throw new InvalidRequestError("Name the queue whose history the rule is tried on.", [
      { path: "queue", message: "required for a rule that applies in every queue" },
    ]);
  const queue = await managedHistoryQueue(db, caller, historyOf);
  // a queue's rule only ever meets that queue's calls
  if (scope !== null && scope !== queue.id)
    throw new InvalidRequestError("A queue's rule can only be tried on that queue's history.", [
      { path: "queue", message: "the rule's own queue, or leave it out" },
    ]);
  const period = periodOf(input);
  const agentKeyId = input.rule.agent
    ? await resolveAgent(db, input.rule.agent, "rule.agent")
    : null;
  const candidate = candidateRule(input.rule, {
    id: input.ruleId ?? "(backtest)",
    queueId: scope,
    agentKeyId,
  });
  const others = await rulesForQueue(db, queue.id);
  const cards = await readPolicyHistory(queue.id, period.from, period.to);
  const trial = await backtestRuleAsync(candidate, others, cards);
  return describeTrial(db, queue, period, candidate, trial);
}

const tallyOf = (t: Tally) => ({
  matched: t.matched,
  approved: t.approved,
  edited: t.edited,
  rejected: t.rejected,
  expired: t.expired,
  overturned: t.overturned,
});

/** The answer: counts, the overturned decisions with who made them, the breakdowns. */
export async function describeTrial(
  db: Executor,
  queue: { id: string; name: string },
  period: { from: number; to: number },
  rule: PolicyRule,
  trial: RuleTrial,
) {
  const listed = trial.overturnedCalls.slice(0, MAX_LISTED_OVERTURNS);
  const decisions = await decisionsOf(listed.map((c) => c.id));
  const deciders = await decidersOf(
    listed.map((c) => ({
      id: c.id,
      revision: c.revision,
      outcome: c.verdict === "rejected" ? ("rejected" as const) : ("approved" as const),
    })),
  );
  const agentIds = [
    ...new Set([...trial.byAgent.keys(), ...listed.map((c) => c.agentKeyId), rule.agentKeyId]),
  ].filter((id): id is string => !!id);
  const agentNames = new Map(
    agentIds.length
      ? (
          await db
            .select({ id: agentKeys.id, name: agentKeys.name })
            .from(agentKeys)
            .where(inArray(agentKeys.id, agentIds))
        ).map((a) => [a.id, a.name])
      : [],
  );
  const agent = (id: string) => ({ id, name: agentNames.get(id) ?? "(deleted agent)" });
  const busiestFirst = (a: { matched: number }, b: { matched: number }) => b.matched - a.matched;
  return {
    queue,
    period: { from: isoTime(period.from), to: isoTime(period.to) },
    effect: rule.effect,
    conditions: describeConditions(rule, agentNames.get(rule.agentKeyId ?? "")),
    calls: tallyOf(trial),
    notEvidence: trial.notEvidence,
    shadowed: trial.shadowed,
    cards: { settled: trial.cards, savedMs: trial.savedMs },
    overturned: {
      count: trial.overturnedCalls.length,
      truncated: trial.overturnedCalls.length > listed.length,
      decisions: listed.map((call) => ({
        callId: call.id,
        batchId: call.batchId,
        runId: call.runId,
        agent: agent(call.agentKeyId),
        toolName: call.toolName,
        args: call.args,
        outcome: call.verdict === "rejected" ? ("rejected" as const) : ("approved" as const),
        edited: call.verdict === "edited",
        decidedAt: isoTime(decisions.get(call.id)?.decidedAt),
        deciders: (deciders.get(call.id) ?? []).map((d) => ({
          id: d.id,
          name: d.name ?? "(deleted person)",
          at: isoTime(d.at),
        })),
        reason: decisions.get(call.id)?.reason ?? null,
      })),
    },
    byAgent: [...trial.byAgent]
      .map(([id, t]) => ({ agent: agent(id), ...tallyOf(t) }))
      .sort(busiestFirst),
    byTool: [...trial.byTool]
      .map(([toolName, t]) => ({ toolName, ...tallyOf(t) }))
      .sort(busiestFirst),
    summary: summaryOf(rule.effect, trial),
  };
}

/** "would have approved 312 cards, overturning none" */
export function summaryOf(effect: PolicyRule["effect"], trial: RuleTrial): string {
  const n = (count: number, one: string, many = `${one}s`) =>
    `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
  const overturning =
    trial.overturnedCalls.length === 0
      ? "overturning none"
      : `overturning ${n(trial.overturnedCalls.length, "decision")}`;
  if (effect === "ask")
    return `would have sent ${n(trial.matched, "call")} to a reviewer, as they were`;
  const verb = effect === "allow" ? "approved" : "blocked";
  return `would have ${verb} ${n(trial.cards, "card")} (${n(trial.matched, "call")}), ${overturning}`;
}
