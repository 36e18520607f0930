import type { z } from "zod";
import { InvalidRequestError } from "@/lib/errors";

/** Parses `input` with `schema`, or throws the contract's `400 invalid_request` listing every issue. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join(".") || "(body)",
    message: issue.message,
  }));
  const first = issues[0]!;
  throw new InvalidRequestError(
    `Invalid request: ${first.path}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`,
    issues,
    result.error.issues,
  );
}
