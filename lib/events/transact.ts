import { writeTransaction, type Transaction } from "@/db/client";
import { wakeTailer } from "./tailer";

/**
 * One state change: runs `work` in a write transaction and, once it has committed, wakes this
 * process's streams so they read the new events at once (other processes find them by polling).
 */
export async function transact<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
  const result = await writeTransaction(work);
  wakeTailer();
  return result;
}
