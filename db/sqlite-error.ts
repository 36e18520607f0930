/**
 * The SQLite result code of a database failure — `SQLITE_BUSY`, or an extended one such as
 * `SQLITE_IOERR_WRITE` when the driver gives it — or null for any other error. drizzle wraps the
 * driver's LibsqlError in `cause`, so the chain is followed a few links deep.
 */
export function sqliteCodeOf(error: unknown): string | null {
  for (let cause = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    const { code, extendedCode } = cause as { code?: unknown; extendedCode?: unknown };
    for (const candidate of [extendedCode, code]) {
      if (typeof candidate === "string" && candidate.startsWith("SQLITE_")) return candidate;
    }
    cause = cause.cause;
  }
  return null;
}
