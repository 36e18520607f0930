import { and, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { getDb } from "@/db/client";
import { calls, runs } from "@/db/schema";
import { changedRow, untilWritten, updateRow } from "@/db/write-batch";
import { findRunFor } from "@/lib/api/access";
import { parseInput } from "@/lib/api/parse";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { ConflictError, NotFoundError } from "@/lib/errors";
import { eventRows } from "@/lib/events/append-event";
import { commit } from "@/lib/events/transact";
import { SingleLineText } from "@/lib/text/stored-text";

export const ReportGatedOutcomesInput = z.object({
  outcomes: z
    .array(
      z.object({
        callId: SingleLineText.min(1).max(200),
        type: z.enum(["tool.completed", "tool.failed"]),
        result: z.unknown().optional(),
        error: z.unknown().optional(),
      }),
    )
    .min(1)
    .max(100),
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
  const ids = [...new Set(input.outcomes.map((o) => o.callId))];
  return untilWritten(async () => {
    const db = getDb();
    const [run, found] = await Promise.all([
      findRunFor(db, agent, runId),
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
        .where(and(inArray(calls.id, ids), eq(runs.agentKeyId, agent.id))),
    ]);
    const byId = new Map(found.map((c) => [c.id, c]));
    for (const id of ids) {
      const call = byId.get(id);
      if (!call || call.gateway === null) throw new NotFoundError(`Gateway call '${id}'`);
      if (call.status !== "approved" || call.usedAt === null)
        throw new ConflictError(
          "not_ready",
          `Call '${id}' was not approved and used: nothing of it ran to report on.`,
          null,
        );
    }
    const alreadyReported = ids.filter((id) => byId.get(id)!.reportedAt !== null);
    const fresh = input.outcomes.filter(
      (o, i) =>
        byId.get(o.callId)!.reportedAt === null &&
        input.outcomes.findIndex((x) => x.callId === o.callId) === i,
    );
    if (fresh.length === 0) return { recorded: [], alreadyReported };
    const now = Date.now();
    await commit([
      ...fresh.flatMap((o) => [
        updateRow(calls, { reportedAt: now }, "id = ? and reported_at is null", o.callId),
        changedRow(),
      ]),
      eventRows(
        ...fresh.map((o) => {
          const call = byId.get(o.callId)!;
          return {
            type: o.type,
            runId: run.id,
            batchId: call.batchId,
            callId: call.id,
            queueId: run.queueId,
            actor: actorRef(agent),
            data: {
              toolCallId: call.toolCallId,
              toolName: call.toolName,
              ...(o.result !== undefined && { result: o.result }),
              ...(o.error !== undefined && { error: o.error }),
            },
            at: now,
          };
        }),
      ),
    ]);
    return { recorded: fresh.map((o) => o.callId), alreadyReported };
  });
}
