import type { InValue } from "@libsql/client";
import { getTableColumns, getTableName, type Table } from "drizzle-orm";
import { guard, updateRow, type Statement } from "@/db/write-batch";

// Conditions for write batches (db/write-batch.ts) that the batch helpers do not spell out.

/**
 * SQL that holds while every column of `row` (as read) still has the value read: the
 * compare-and-swap of a table without a version column, so the event that logs the row's
 * before and after names what the write really replaced. `is` compares nulls too.
 */
export function unchangedRow<T extends Table>(
  table: T,
  row: Partial<T["$inferSelect"]>,
): { sql: string; args: InValue[] } {
  const columns = getTableColumns(table);
  const parts: string[] = [];
  const args: InValue[] = [];
  for (const [key, value] of Object.entries(row)) {
    const column = columns[key];
    if (!column) throw new Error(`${getTableName(table)} has no column for '${key}'`);
    parts.push(`"${column.name}" is ?`);
    args.push(
      value === null || value === undefined ? null : (column.mapToDriverValue(value) as InValue),
    );
  }
  return { sql: parts.join(" and "), args };
}

/**
 * Aborts the batch unless the rows of `table` within `scope` (SQL with its own arguments) are
 * exactly `rows`, each at the position read: a renumbering planned on an order someone changed
 * meanwhile (a move, a new rule) writes nothing and is planned again.
 */
export function sameOrder(
  table: Table,
  scope: { sql: string; args: InValue[] },
  rows: { id: string; position: number }[],
): Statement {
  const name = `"${getTableName(table)}"`;
  return guard(
    `(select count(*) from ${name} where ${scope.sql}) = ? and (select count(*) from ${name} as t join json_each(?) as j on t.id = json_extract(j.value, '$[0]') and t.position = json_extract(j.value, '$[1]')) = ?`,
    ...scope.args,
    rows.length,
    JSON.stringify(rows.map((row) => [row.id, row.position])),
    rows.length,
  );
}

/**
 * The writes of a renumbering planned on `order` (as read, within `scope`): the order is still
 * the one read, then each row that moves gets its new position.
 */
export function renumber(
  table: Table,
  scope: { sql: string; args: InValue[] },
  order: { id: string; position: number }[],
  changes: { id: string; position: number }[],
): Statement[] {
  return [
    sameOrder(table, scope, order),
    ...changes.map((change) =>
      updateRow(table, { position: change.position }, "id = ?", change.id),
    ),
  ];
}
