import { z } from "zod";
import { getDb } from "@/db/client";
import { untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { actorRef, requireAgent, type Actor } from "@/lib/auth/actor";
import { eventRows, eventsWritten, type NewEvent } from "@/lib/events/append-event";
import { toWireEvent, type WireEvent } from "@/lib/events/wire";
import { commit } from "@/lib/events/commit";
import { whileHeld } from "./while-held";
import { SingleLineText } from "@/lib/text/stored-text";

export const RecordToolEventInput = z
  .object({
    /** required once the run was claimed; a run that never paused is held by its creator */
    claimToken: SingleLineText.min(1).max(200).optional(),
    type: z.enum(["tool.completed", "tool.failed", "action.reverted"]),
    toolCallId: SingleLineText.min(1).max(200),
    result: z.unknown().optional(),
    error: z.unknown().optional(),
    /** how to undo this action later (kept for rollback) */
    revert: z.unknown().optional(),
  })
  .refine((e) => e.type === "tool.completed" || e.revert === undefined, {
    path: ["revert"],
    message: "only a completed tool call can carry revert data",
  });
export type RecordToolEventInput = z.infer<typeof RecordToolEventInput>;

/** The claim holder reports what a tool did (or that an action was reverted). */
export async function recordToolEvent(
  actor: Actor,
  runId: string,
  body: unknown,
): Promise<WireEvent> {
  const agent = requireAgent(actor);
  const input = parseInput(RecordToolEventInput, body);
  return untilWritten(async () => {
    const run = await findRunFor(getDb(), agent, runId);
    const now = Date.now();
    const event: NewEvent = {
      type: input.type,
      runId: run.id,
      queueId: run.queueId,
      actor: actorRef(agent),
      data: {
        toolCallId: input.toolCallId,
        ...(input.result !== undefined && { result: input.result }),
        ...(input.error !== undefined && { error: input.error }),
        ...(input.revert !== undefined && { revert: input.revert }),
      },
      at: now,
    };
    // The run is touched (its updatedAt) only to hold the claim's condition in the same batch.
    const held = await whileHeld(run, input.claimToken, {}, now);
    const insert = eventRows(event);
    const results = await commit([...held, insert]);
    return toWireEvent(eventsWritten([insert], [results[held.length]!])[0]!);
  });
}
