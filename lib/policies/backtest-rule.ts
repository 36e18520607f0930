import type { PolicyRule } from "@/db/schema";
import { checkRule, evaluateCall } from "./evaluate-policy";
import type { CallVerdict, HistoryCall, HistoryCard } from "./policy-history";

// A rule weighed against a queue's history (policy-history.ts), with the live gate's own matcher:
// `evaluateCall` over the queue's enabled rules with the candidate among them, as batch creation
// would run it. Pure: the backtest endpoint and the suggestions both count with it.
//
// - A call is **matched** when the candidate's conditions hold for it and its effect is the one
//   that wins (an enabled deny or ask rule that also matches takes the call: it is `shadowed`).
// - Only people's decisions are evidence: policy and memory calls are counted apart.
// - **Overturned**: an allow rule matching a call a reviewer rejected; a deny rule matching one a
//   reviewer approved (as asked or edited).
// - A card is **settled** by the rule when every call of it that waited for a person (decided by
//   one, or left to its deadline) is matched: with the rule on, nobody would have seen the card.
//   Its time to decision (creation to the last decision) is reviewer time saved; an expired
//   card's wait was nobody's work, so it saves none.

export type Tally = {
  matched: number;
  approved: number;
  edited: number;
  rejected: number;
  expired: number;
  overturned: number;
};

export type RuleTrial = Tally & {
  /** calls the rule matches that a policy or a remembered approval settled: not evidence */
  notEvidence: { policy: number; memory: number };
  /** calls whose conditions the rule meets but a stronger enabled rule takes */
  shadowed: number;
  cards: number;
  savedMs: number;
  /** every overturned call, oldest first */
  overturnedCalls: HistoryCall[];
  byAgent: Map<string, Tally>;
  byTool: Map<string, Tally>;
  /** the matched calls' ids: the evidence a suggestion stands on */
  matchedCallIds: string[];
};

const emptyTally = (): Tally => ({
  matched: 0,
  approved: 0,
  edited: 0,
  rejected: 0,
  expired: 0,
  overturned: 0,
});

const HUMAN: ReadonlySet<CallVerdict> = new Set(["approved", "edited", "rejected", "expired"]);

export function overturns(rule: Pick<PolicyRule, "effect">, verdict: CallVerdict): boolean {
  if (rule.effect === "allow") return verdict === "rejected";
  if (rule.effect === "deny") return verdict === "approved" || verdict === "edited";
  return false;
}

/** Cards counted between two turns of the event loop (backtestRuleAsync). */
const CHUNK = 250;

function emptyTrial(): RuleTrial {
  return {
    ...emptyTally(),
    notEvidence: { policy: 0, memory: 0 },
    shadowed: 0,
    cards: 0,
    savedMs: 0,
    overturnedCalls: [],
    byAgent: new Map(),
    byTool: new Map(),
    matchedCallIds: [],
  };
}

/** The candidate, on for the trial, and the enabled rules it would sit among (its own copy out). */
function trialRules(candidate: PolicyRule, others: PolicyRule[]) {
  const rule = { ...candidate, enabled: true };
  return { rule, rules: [...others.filter((r) => r.id !== rule.id && r.enabled), rule] };
}

/**
 * `candidate` (enabled for the trial, whatever it says) against `cards`; `others` are the enabled
 * rules it would sit among (the queue's and the global ones, the candidate's own stored copy left
 * out).
 */
export function backtestRule(
  candidate: PolicyRule,
  others: PolicyRule[],
  cards: HistoryCard[],
): RuleTrial {
  const { rule, rules } = trialRules(candidate, others);
  const trial = emptyTrial();
  for (const card of cards) countCard(trial, rule, rules, card);
  return trial;
}

/**
 * The same, letting the event loop run every few hundred cards: 90 days of a busy queue take a
 * few hundred ms to weigh, which must not hold up the requests the same process serves.
 */
export async function backtestRuleAsync(
  candidate: PolicyRule,
  others: PolicyRule[],
  cards: HistoryCard[],
): Promise<RuleTrial> {
  const { rule, rules } = trialRules(candidate, others);
  const trial = emptyTrial();
  for (let i = 0; i < cards.length; i += CHUNK) {
    for (const card of cards.slice(i, i + CHUNK)) countCard(trial, rule, rules, card);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return trial;
}

function count(tally: Tally, call: HistoryCall, overturned: boolean) {
  tally.matched++;
  if (call.verdict !== "policy" && call.verdict !== "memory") tally[call.verdict]++;
  if (overturned) tally.overturned++;
}

function into(map: Map<string, Tally>, key: string): Tally {
  let tally = map.get(key);
  if (!tally) map.set(key, (tally = emptyTally()));
  return tally;
}

function countCard(trial: RuleTrial, rule: PolicyRule, rules: PolicyRule[], card: HistoryCard) {
  let waited = 0;
  let settled = 0;
  for (const call of card.calls) {
    const human = HUMAN.has(call.verdict);
    if (human) waited++;
    const context = { agentKeyId: call.agentKeyId, agentMode: "ask" as const };
    if (!checkRule(rule, call, context).matched) continue;
    // the candidate's effect must be the winning one (its conditions may hold and lose)
    if (evaluateCall(rules, call, context).effect !== rule.effect) {
      trial.shadowed++;
      continue;
    }
    if (!human) {
      trial.notEvidence[call.verdict as "policy" | "memory"]++;
      continue;
    }
    settled++;
    const overturned = overturns(rule, call.verdict);
    if (overturned) trial.overturnedCalls.push(call);
    trial.matchedCallIds.push(call.id);
    count(trial, call, overturned);
    count(into(trial.byAgent, call.agentKeyId), call, overturned);
    count(into(trial.byTool, call.toolName), call, overturned);
  }
  if (rule.effect !== "ask" && waited > 0 && settled === waited) {
    trial.cards++;
    if (card.status === "decided") trial.savedMs += card.decidedAt - card.createdAt;
  }
}
