import type { InStatement } from "@libsql/client";
import { vi } from "vitest";
import { getClient } from "@/db/client";

type Sent = InStatement | [string, unknown?];
const sqlOf = (statement: Sent): string =>
  typeof statement === "string"
    ? statement
    : Array.isArray(statement)
      ? statement[0]
      : statement.sql;

/**
 * The reads `work` sent to the database, each as the SQL of its statements: read batches
 * (`batch(…, "deferred")`) and lone statements (`execute`, as db/prepared-read.ts sends one read).
 */
export async function readsDuring(work: () => Promise<unknown>): Promise<string[][]> {
  const client = getClient();
  const batches = vi.spyOn(client, "batch");
  const executes = vi.spyOn(client, "execute");
  try {
    await work();
    return [
      ...batches.mock.calls
        .filter(([, mode]) => mode === "deferred")
        .map(([statements]) => statements.map(sqlOf)),
      ...executes.mock.calls.map(([statement]) => [sqlOf(statement as Sent)]),
    ];
  } finally {
    batches.mockRestore();
    executes.mockRestore();
  }
}
