import type { DatabaseUrlSource } from "@/lib/config/load-env";

/** A mistake in how the command was called: the CLI prints it with the usage. */
export class UsageError extends Error {}

/** Rows padded into columns; the first row is the header. */
export function table(lines: string[][]): string {
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((line) => line[i]!.length)));
  return lines
    .map((line) =>
      line
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/** The embedded database file a `file:` URL names (null for a server or an in-memory database). */
export function databaseFile(url: string): string | null {
  if (!url.startsWith("file:")) return null;
  const path = url.slice("file:".length).split("?")[0]!;
  return path && path !== ":memory:" ? path : null;
}

/**
 * The line every command prints on stderr, so that an operator sees which database it worked on:
 * without DATABASE_URL in the environment or .env the CLI falls back to the default file, which
 * need not be the server's (an empty `agent list` with no word of why).
 */
export function databaseNotice(display: string, source: DatabaseUrlSource): string {
  const from =
    source === "environment"
      ? "DATABASE_URL from the environment"
      : source === ".env"
        ? "DATABASE_URL from a .env file"
        : "the default: DATABASE_URL is set neither in the environment nor in .env";
  return `Database: ${display} (${from})`;
}

/** The warning for a database file this command created: it was empty, so probably not the one meant. */
export function newDatabaseWarning(file: string): string {
  return (
    `Warning: ${file} did not exist, so this command created a new, empty database there. ` +
    "If the server uses another database, set DATABASE_URL (in the environment or .env) to its URL."
  );
}
