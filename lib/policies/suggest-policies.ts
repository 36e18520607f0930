import { eq, isNull, or } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, policyRules, policySuggestionDismissals } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { type QueueCaller } from "@/lib/queues/queue-access";
import { describePredicate } from "./evaluate-policy";
import { describeTrial, managedHistoryQueue } from "./backtest-policy";
import { mineSuggestions, type MinedSuggestion } from "./mine-suggestions";
import { readPolicyHistory } from "./policy-history";
import { PolicySuggestionsQuery, periodOf } from "./policy-input";

// `GET /policy-suggestions?queue=`: allow rules a queue's reviewers have been applying by hand
// (mine-suggestions.ts finds them), each with its backtest and the body that creates it. For the
// queue's leads and admins. Suggestions a lead dismissed stay hidden while their fingerprint (the
// evidence) is the one dismissed.

export const DEFAULT_MIN_APPROVALS = 20;

export type PolicySuggestions = Awaited<ReturnType<typeof listPolicySuggestions>>;

/** The queue's suggestions as mined, before dismissals are applied (the digest reads them too). */
export async function mineQueueSuggestions(
  queueId: string,
  period: { from: number; to: number },
  minApprovals: number,
): Promise<MinedSuggestion[]> {
  // every rule of the queue and the global ones, on or off (an existing one is not suggested)
  const others = await getDb()
    .select()
    .from(policyRules)
    .where(or(isNull(policyRules.queueId), eq(policyRules.queueId, queueId)));
  const cards = await readPolicyHistory(queueId, period.from, period.to);
  return mineSuggestions(cards, others, { queueId, minApprovals });
}

export async function dismissedFingerprints(queueId: string): Promise<Map<string, string>> {
  const rows = await getDb()
    .select()
    .from(policySuggestionDismissals)
    .where(eq(policySuggestionDismissals.queueId, queueId));
  return new Map(rows.map((r) => [r.suggestionId, r.fingerprint]));
}

/** The rule's name as offered: what it allows, within the 100 characters a name may have. */
export function suggestedName(agentName: string, s: MinedSuggestion): string {
  const bound = s.rule.argPredicates.map(describePredicate).join(", ");
  const name = `Allow ${s.rule.toolPattern} from ${agentName}${bound ? ` where ${bound}` : ""}`;
  return name.length <= 100 ? name : `${name.slice(0, 99)}…`;
}

export async function listPolicySuggestions(caller: QueueCaller, query: unknown) {
  const input = parseInput(PolicySuggestionsQuery, query);
  const db = getDb();
  const queue = await managedHistoryQueue(db, caller, input.queue);
  const period = periodOf(input);
  const minApprovals = input.minApprovals ?? DEFAULT_MIN_APPROVALS;
  const [mined, dismissed] = await Promise.all([
    mineQueueSuggestions(queue.id, period, minApprovals),
    dismissedFingerprints(queue.id),
  ]);
  const offered = mined.filter((s) => dismissed.get(s.id) !== s.fingerprint);
  const agentRows = await db.select({ id: agentKeys.id, name: agentKeys.name }).from(agentKeys);
  const agentName = new Map(agentRows.map((a) => [a.id, a.name]));
  const suggestions = [];
  for (const s of offered) {
    const name = suggestedName(agentName.get(s.rule.agentKeyId!) ?? "(deleted agent)", s);
    suggestions.push({
      id: s.id,
      fingerprint: s.fingerprint,
      agent: {
        id: s.rule.agentKeyId!,
        name: agentName.get(s.rule.agentKeyId!) ?? "(deleted agent)",
      },
      toolName: s.rule.toolPattern!,
      argPredicates: s.rule.argPredicates,
      /** the body of `POST /policy-rules` that creates it (set `enabled` to false to add it off) */
      rule: {
        name,
        queue: queue.id,
        effect: "allow" as const,
        agent: s.rule.agentKeyId!,
        toolPattern: s.rule.toolPattern!,
        argPredicates: s.rule.argPredicates,
        enabled: true,
      },
      backtest: await describeTrial(db, queue, period, { ...s.rule, name }, s.trial),
    });
  }
  return {
    queue,
    period: { from: new Date(period.from).toISOString(), to: new Date(period.to).toISOString() },
    minApprovals,
    dismissed: mined.length - offered.length,
    suggestions,
  };
}
