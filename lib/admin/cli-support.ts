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
