import { z } from "zod";
import { getDb } from "@/db/client";
import { untilWritten } from "@/db/write-batch";
import { findRunFor } from "@/lib/access/find-for-caller";
import { parseInput } from "@/lib/input/parse";
import { requireAgent, type Actor } from "@/lib/auth/actor";
import { commit } from "@/lib/events/commit";
import { isoTime } from "@/lib/ids";
import { whileHeld } from "./while-held";
import { SingleLineText } from "@/lib/text/stored-text";

export const HeartbeatInput = z.object({
  claimToken: SingleLineText.min(1).max(200),
  leaseSecs: z.int().min(5).max(3600).default(60),
});
export type HeartbeatInput = z.infer<typeof HeartbeatInput>;

/**
 * Extends a live lease. Deliberately no event: a worker beats every few seconds and the log is
 * for changes people care about; the lease itself is on the run.
 */
export async function heartbeat(
  actor: Actor,
  runId: string,
  body: unknown,
): Promise<{ leaseExpiresAt: string }> {
  const agent = requireAgent(actor);
  const input = parseInput(HeartbeatInput, body);
  return untilWritten(async () => {
    const run = await findRunFor(getDb(), agent, runId);
    const now = Date.now();
    const leaseExpiresAt = now + input.leaseSecs * 1000;
    await commit(await whileHeld(run, input.claimToken, { leaseExpiresAt }, now));
    return { leaseExpiresAt: isoTime(leaseExpiresAt) };
  });
}
