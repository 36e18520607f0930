import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { preparedRead, readTogether } from "@/db/prepared-read";
import { calls, runs, type Run } from "@/db/schema";
import { changedRow, untilWritten, updateRow, type Statement } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { actorRef, requireAgent, type Actor, type AgentActor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/commit";
import { SingleLineText } from "@/lib/text/stored-text";

/**
 * The largest result or error of one outcome, as JSON text: the gateway sends a summary (its text
 * capped at 2,000 characters), never the whole answer; the cap keeps events and memory bounded.
 */
export const OUTCOME_JSON_LIMIT = 32 * 1024;

const OutcomeValue = z
  .unknown()
  .optional()
  .refine(
    (value) => value === undefined || (JSON.stringify(value)?.length ?? 0) <= OUTCOME_JSON_LIMIT,
    {
      message: `at most ${OUTCOME_JSON_LIMIT} characters as JSON`,
    },
  );

export const GatedOutcome = z.object({
  callId: SingleLineText.min(1).max(200),
  type: z.enum(["tool.completed", "tool.failed"]),
  result: OutcomeValue,
  error: OutcomeValue,
});
export type GatedOutcome = z.infer<typeof GatedOutcome>;

export const ReportGatedOutcomesInput = z.object({
  outcomes: z.array(GatedOutcome).min(1).max(100),
});
export type ReportGatedOutcomesInput = z.infer<typeof ReportGatedOutcomesInput>;

/**
 * What the tools of a gateway's approved calls answered, reported after the client got it (off
 * its critical path), several at once when they queued up: each is a `tool.completed` /
 * `tool.failed` event on the session's run, once per call (`reported_at`, a compare-and-swap, so
 * a report retried after a lost answer is not a second one: it is listed as already reported).
 * The run may have ended meanwhile (a report is a fact about what ran).
 */
export async function reportGatedOutcomes(
  actor: Actor,
  runId: string,
  body: unknown,
): Promise<{ recorded: string[]; alreadyReported: string[] }> {
  const agent = requireAgent(actor);
  const input = parseInput(ReportGatedOutcomesInput, body);
  return untilWritten(async () => {
    const [run, found] = await Promise.all([
      findRunFor(getDb(), agent, runId),
      readOutcomeCalls(agent, input.outcomes),
    ]);
    const plan = planOutcomes(agent, run, input.outcomes, found, Date.now());
    const [refused] = plan.refused;
    if (refused) {
      if (refused.why === "not_found") throw new NotFoundError(`Gateway call '${refused.callId}'`);
      throw new ConflictError(
        "not_ready",
        `Call '${refused.callId}' was not approved and used: nothing of it ran to report on.`,
        null,
      );
    }
    if (plan.writes.length > 0) await commit(plan.writes);
    return { recorded: plan.recorded, alreadyReported: plan.alreadyReported };
  });
}

export type OutcomeCall = Awaited<ReturnType<typeof readOutcomeCalls>>[number];

/** The agent's calls the outcomes are about (read before the write, outside its lock). */
export async function readOutcomeCalls(agent: AgentActor, outcomes: GatedOutcome[]) {
  if (outcomes.length === 0) return [];
  const [rows] = await readTogether([outcomeCallsRead()], outcomeCallsValues(agent, outcomes));
  return rows;
}

/** The placeholders of `outcomeCallsRead` (`agentId`, `outcomeIds`). */
export const outcomeCallsValues = (agent: AgentActor, outcomes: GatedOutcome[]) => ({
  agentId: agent.id,
  outcomeIds: JSON.stringify([...new Set(outcomes.map((o) => o.callId))]),
});

/** Prepared once; sent alone, or in the read batch of a gateway's call (record-gated-call.ts). */
export const outcomeCallsRead = preparedRead((db) =>
  db
    .select({
      id: calls.id,
      batchId: calls.batchId,
      toolCallId: calls.toolCallId,
      toolName: calls.toolName,
      status: calls.status,
      gateway: calls.gateway,
      usedAt: calls.usedAt,
      reportedAt: calls.reportedAt,
    })
    .from(calls)
    .innerJoin(runs, eq(runs.id, calls.runId))
    .where(
      and(
        sql`${calls.id} in (select value from json_each(${sql.placeholder("outcomeIds")}))`,
        eq(runs.agentKeyId, sql.placeholder("agentId")),
      ),
    )
    .prepare(),
);

/**
 * The writes that record `outcomes` on `run` (each call's compare-and-swap on `reported_at`, and
 * the events), and how each outcome was taken: recorded now, reported before, or refused (not
 * this agent's gateway call, or not one that was approved and used).
 */
export function planOutcomes(
  agent: AgentActor,
  run: Pick<Run, "id" | "queueId">,
  outcomes: GatedOutcome[],
  found: OutcomeCall[],
  now: number,
): {
  writes: Statement[];
  recorded: string[];
  alreadyReported: string[];
  refused: { callId: string; why: "not_found" | "not_used" }[];
} {
  const byId = new Map(found.map((c) => [c.id, c]));
  const seen = new Set<string>();
  const fresh: { outcome: GatedOutcome; call: OutcomeCall }[] = [];
  const alreadyReported: string[] = [];
  const refused: { callId: string; why: "not_found" | "not_used" }[] = [];
  for (const outcome of outcomes) {
    if (seen.has(outcome.callId)) continue;
    seen.add(outcome.callId);
    const call = byId.get(outcome.callId);
    if (!call || call.gateway === null) refused.push({ callId: outcome.callId, why: "not_found" });
    else if (call.status !== "approved" || call.usedAt === null)
      refused.push({ callId: outcome.callId, why: "not_used" });
    else if (call.reportedAt !== null) alreadyReported.push(call.id);
    else fresh.push({ outcome, call });
  }
  if (fresh.length === 0) return { writes: [], recorded: [], alreadyReported, refused };
  const writes: Statement[] = [
    ...fresh.flatMap(({ call }) => [
      updateRow(calls, { reportedAt: now }, "id = ? and reported_at is null", call.id),
      changedRow(),
    ]),
    eventRows(
      ...fresh.map(({ outcome, call }) => ({
        type: outcome.type,
        runId: run.id,
        batchId: call.batchId,
        callId: call.id,
        queueId: run.queueId,
        actor: actorRef(agent),
        data: {
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          ...(outcome.result !== undefined && { result: outcome.result }),
          ...(outcome.error !== undefined && { error: outcome.error }),
        },
        at: now,
      })),
    ),
  ];
  return { writes, recorded: fresh.map(({ call }) => call.id), alreadyReported, refused };
}
