import { eq, inArray, or } from "drizzle-orm";
import { getDb } from "@/db/client";
import { agentKeys, queues } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { NotFoundError } from "@/lib/errors";
import { findQueueFor, managerOf, type QueueCaller } from "@/lib/queues/queue-access";
import { evaluateCall } from "./evaluate-policy";
import { explainRule } from "./explain-check";
import { describeConditions, rulesForQueue } from "./list-policy-rules";
import { resolveAgent } from "@/lib/agents/resolve-agent";
import { PolicyTryInput } from "./policy-input";

/**
 * "Try a call": what would happen to this tool call if an agent asked now, which rule would
 * decide and why every other rule did or did not match. Writes nothing.
 */
export async function tryPolicy(caller: QueueCaller, body: unknown) {
  const input = parseInput(PolicyTryInput, body);
  const db = getDb();
  const manager = await managerOf(db, caller);
  const [queue] = await db
    .select({ id: queues.id })
    .from(queues)
    .where(or(eq(queues.id, input.queue), eq(queues.name, input.queue)));
  if (!queue) throw new NotFoundError("Queue");
  await findQueueFor(db, manager, queue.id);
  const agentKeyId = input.agent ? await resolveAgent(db, input.agent) : "";
  const [agent] = agentKeyId
    ? await db.select({ mode: agentKeys.mode }).from(agentKeys).where(eq(agentKeys.id, agentKeyId))
    : [];
  const rules = await rulesForQueue(db, queue.id);
  const namedAgents = [...new Set(rules.flatMap((r) => (r.agentKeyId ? [r.agentKeyId] : [])))];
  const agentNames = new Map(
    namedAgents.length
      ? (
          await db
            .select({ id: agentKeys.id, name: agentKeys.name })
            .from(agentKeys)
            .where(inArray(agentKeys.id, namedAgents))
        ).map((a) => [a.id, a.name])
      : [],
  );
  const verdict = evaluateCall(rules, input.call, {
    agentKeyId,
    agentMode: agent?.mode ?? "ask",
    agentNames,
  });
  return {
    outcome: verdict.outcome,
    effect: verdict.effect,
    agentMode: verdict.agentMode,
    explanation: verdict.explanation,
    rule: verdict.rule ? { id: verdict.rule.id, name: verdict.rule.name } : null,
    checks: verdict.checks.map((check) => {
      // what the call had where each condition looked: which one failed, on which value
      const why = explainRule(check.rule, input.call, { agentKeyId, agentNames });
      return {
        rule: {
          id: check.rule.id,
          name: check.rule.name,
          effect: check.rule.effect,
          queueId: check.rule.queueId,
          conditions: describeConditions(check.rule),
        },
        matched: check.matched,
        conditions: check.reasons.map((reason, index) => ({ ...reason, why: why[index] ?? null })),
      };
    }),
  };
}
