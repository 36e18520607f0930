import { writeTransaction, type Transaction } from "@/db/client";
import type { ResultSet } from "@libsql/client";
import { writeBatch, type Statement } from "@/db/write-batch";
import { observeEvents } from "@/lib/metrics/metrics";
import { eventsWritten } from "./append-event";
import { offerEvents, wakeTailer } from "./tailer";

/**
 * One state change: runs `work` in a write transaction and, once it has committed, wakes this
 * process's streams so they read the new events at once (other processes find them by polling).
 */
export async function transact<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
  const result = await writeTransaction(work);
  wakeTailer();
  return result;
}

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
