import { and, eq } from "drizzle-orm";
import { getDb } from "@/db/client";
import { calls, runs } from "@/db/schema";
import { untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { loadBatchView } from "@/lib/read-models/batch-run-views";
import { requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { commit } from "@/lib/events/commit";
import { assertGatewayRun, gatedAnswer, planUse, type GatedCallAnswer } from "./gated-answer";

/**
 * A gateway that waited on a card takes its decision for the session's run: once. The call must
 * be one of this agent's gateway calls, decided (409 not_ready while it waits), and not used yet
 * (409 already_claimed: another call of a gateway — a replay, or a restarted gateway — used it).
 */
export async function useGatedDecision(
  actor: Actor,
  runId: string,
  callId: string,
): Promise<GatedCallAnswer> {
  const agent = requireAgent(actor);
  return untilWritten(async () => {
    const db = getDb();
    const [run, [found]] = await Promise.all([
      findRunFor(db, agent, runId),
      db
        .select({ batchId: calls.batchId, gateway: calls.gateway, usedAt: calls.usedAt })
        .from(calls)
        .innerJoin(runs, eq(runs.id, calls.runId))
        .where(and(eq(calls.id, callId), eq(runs.agentKeyId, agent.id))),
    ]);
    // Another agent's call, or one no gateway made, is answered as a missing one.
    if (!found || found.gateway === null) throw new NotFoundError("Gateway call");
    await assertGatewayRun(run);
    const batch = (await loadBatchView(db, found.batchId, "agent"))!;
    const answer = gatedAnswer(batch, callId, true);
    if (found.usedAt !== null)
      throw new ConflictError(
        "already_claimed",
        "This decision was already used by a call; an approval is used once. Ask again.",
        answer,
      );
    if (answer.decision === "ask")
      throw new ConflictError("not_ready", "This call is still waiting for a decision.", answer);
    if (batch.calls.find((c) => c.id === callId)!.status === "cancelled")
      throw new ConflictError("not_pending", "This call was withdrawn.", answer);
    await commit(planUse(agent, run.id, batch, callId, Date.now()));
    return answer;
  });
}
