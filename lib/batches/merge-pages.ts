/**
 * The first `limit` rows of several pages that are each sorted by `compare`, in that order.
 *
 * SQLite walks an index in order for one queue (and one status) and stops at the LIMIT, but to
 * order the rows of several queues together it sorts every matching row first: a listing over a
 * reviewer's queues then costs as much as their whole history. So listings ask each queue for one
 * page, each an index walk, and merge those here (a few pages of at most `limit` rows each).
 */
export function mergePages<T>(pages: T[][], compare: (a: T, b: T) => number, limit: number): T[] {
  return pages.flat().sort(compare).slice(0, limit);
}

/** Newest first by a UUIDv7 id (ids sort by creation time). */
export const byIdDescending = (a: { id: string }, b: { id: string }) =>
  a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
