import type { ResultSet } from "@libsql/client";
import { StateMoved, untilWritten, writeBatch, type Statement } from "@/db/write-batch";
import { ApiError } from "@/lib/errors";
import { observeEvents } from "@/lib/metrics/metrics";
import { eventsWritten } from "./append-event";
import { offerEvents } from "./tailer";

/**
 * One state change as one write batch (db/write-batch.ts); the events it appended go to this
 * process's streams straight from the batch's answer (see offerEvents), without a read.
 * A guard that finds the state moved throws `StateMoved`: run the verb inside `untilWritten`.
 */
export async function commit(statements: Statement[]): Promise<ResultSet[]> {
  const results = await writeBatch(statements);
  const written = eventsWritten(statements, results);
  offerEvents(written);
  observeEvents(written);
  return results;
}

/**
 * `untilWritten` for a verb whose first try may plan from what this process remembers (`recall`;
 * null: nothing) instead of reading, its write guarded on that memory still holding. Anything but
 * the write — a refusal (4xx), or the guard finding the memory stale — is answered only from a
 * read, on the next try (`attempt(null)`): memory can cost a round trip, never change an answer.
 */
export function untilWrittenRecalling<Memory extends NonNullable<unknown>, T>(
  recall: () => Memory | null,
  attempt: (memory: Memory | null) => Promise<T>,
): Promise<T> {
  return untilWritten(async (tries) => {
    const memory = tries === 1 ? recall() : null;
    if (memory === null) return attempt(null);
    try {
      return await attempt(memory);
    } catch (error) {
      if (error instanceof ApiError) throw new StateMoved();
      throw error;
    }
  });
}
