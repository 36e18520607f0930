import { eq } from "drizzle-orm";
import { z } from "zod";
import { setAsides, users } from "@/db/schema";
import { insertRows } from "@/db/write-batch";
import { parseInput } from "@/lib/input/parse";
import type { BatchView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import { changeReviewerMark } from "@/lib/claims/reviewer-mark";
import { ConflictError, ForbiddenError } from "@/lib/errors";
import { isoTime } from "@/lib/ids";
import { DEFAULT_TIME_ZONE, TimeZoneName } from "@/lib/time/zone";
import {
  lastFifthBegins,
  returnsAt,
  SET_ASIDE_CHOICES,
  setAsideUntil,
  type SetAsideChoice,
} from "@/lib/time/set-aside-times";

export const SetAsideInput = z.object({
  for: z
    .enum(SET_ASIDE_CHOICES)
    .describe("15 minutes, 1 hour, or until 09:00 of the next day in `timeZone`"),
  timeZone: TimeZoneName.optional().describe(
    "the zone whose next morning 'tomorrow' means (the browser's); default: the person's own zone setting, else UTC",
  ),
});
export type SetAsideInput = z.input<typeof SetAsideInput>;

const CHOICE_WORDS: Record<SetAsideChoice, string> = {
  "15m": "15 minutes",
  "1h": "1 hour",
  tomorrow: "tomorrow morning",
};

/**
 * "Not now": takes a pending card out of the caller's own queue view for a while. Nothing is
 * decided and nobody else's view changes except for a note saying who set it aside and until
 * when. It comes back at the chosen time, or sooner when the card enters the last fifth of its
 * time (set-aside-times.ts); setting it aside again replaces the caller's earlier choice.
 *
 * Who may: a member of the card's queue who may decide it (an agent key's owner, under
 * separation of duties, may not: they cannot decide it either). Reads, then one write batch
 * (lib/claims/reviewer-mark.ts): the guard re-checks that the card is still pending, before its deadline,
 * in the queue it was read in and the caller still a member, then the row and its
 * `batch.set_aside` event, which carries the batch so every tab of the caller's follows.
 */
export async function setAside(actor: Actor, batchId: string, body: unknown): Promise<BatchView> {
  const reviewer = requireReviewer(actor);
  const input = parseInput(SetAsideInput, body ?? {});
  return changeReviewerMark(reviewer, batchId, {
    read: async (db, target) => {
      if (target.separationOfDuties && target.agentOwnerId === reviewer.id) {
        throw new ForbiddenError(
          "Your own agent asked for this card, and this queue separates duties: you cannot decide it, so there is nothing to set aside.",
        );
      }
      if (input.timeZone) return input.timeZone;
      const [person] = await db
        .select({ timeZone: users.timeZone })
        .from(users)
        .where(eq(users.id, reviewer.id));
      return person?.timeZone ?? DEFAULT_TIME_ZONE;
    },
    change: ({ target: { batch }, row, extra: timeZone, now, current }) => {
      if (row.batch.status !== "pending" || row.batch.expiresAt <= now) {
        throw new ConflictError(
          "not_pending",
          `This card is ${row.batch.status === "pending" ? "past its deadline" : row.batch.status}; there is nothing to set aside.`,
          current(),
        );
      }
      const comesBack = lastFifthBegins(row.batch);
      if (comesBack <= now) {
        throw new ConflictError(
          "deadline_near",
          `This card is in the last fifth of its time (its deadline is ${isoTime(row.batch.expiresAt)}): it stays in the queue.`,
          current(),
          { expiresAt: isoTime(row.batch.expiresAt) },
        );
      }
      const until = setAsideUntil(input.for, now, timeZone);
      const back = returnsAt(until, row.batch);
      return {
        row: {
          ...row,
          setAsides: [
            ...row.setAsides.filter((s) => s.userId !== reviewer.id),
            { userId: reviewer.id, name: reviewer.name, setAt: now, until },
          ],
        },
        write: insertRows(
          setAsides,
          [{ batchId: batch.id, userId: reviewer.id, setAt: now, until }],
          " on conflict (batch_id, user_id) do update set set_at = excluded.set_at, until = excluded.until",
        ),
        whilePending: true,
        event: {
          type: "batch.set_aside",
          data: {
            for: input.for,
            choice: CHOICE_WORDS[input.for],
            until: isoTime(until),
            returnsAt: isoTime(back),
            // it comes back before the chosen time: its deadline nears first
            early: back < until,
            ...(input.for === "tomorrow" && { timeZone }),
          },
        },
      };
    },
  });
}
