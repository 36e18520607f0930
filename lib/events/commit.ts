import type { ResultSet } from "@libsql/client";
import { writeBatch, type Statement } from "@/db/write-batch";
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
