import canonicalize from "canonicalize";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { sha256Hex } from "@/lib/ids";

// `Idempotency-Key`: a retried create answers the first result. Read before the create writes
// and recorded in its write batch on the condition that no twin recorded it first (a twin that
// did aborts the batch, and the retry answers the twin's result): exactly one creates.

export type Idempotency = { key: string; scope: string; requestHash: string };

export function idempotencyFor(
  key: string | null | undefined,
  scope: string,
  body: unknown,
): Idempotency | null {
  if (key === null || key === undefined) return null;
  if (key.length === 0 || key.length > 255) {
    throw new InvalidRequestError("Idempotency-Key must be 1 to 255 characters.", [
      { path: "Idempotency-Key", message: "must be 1 to 255 characters" },
    ]);
  }
  return { key, scope, requestHash: sha256Hex(canonicalize(body ?? null) ?? "null") };
}

/** An earlier answer to this key (read by the caller) stands only for the same body. */
export function assertSameRequest(
  idempotency: Idempotency,
  earlier: { requestHash: string },
  current: unknown,
): void {
  if (earlier.requestHash !== idempotency.requestHash) {
    throw new ConflictError(
      "idempotency_conflict",
      "This Idempotency-Key was already used with a different body.",
      current,
    );
  }
}
