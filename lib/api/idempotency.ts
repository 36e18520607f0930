import canonicalize from "canonicalize";
import { and, eq } from "drizzle-orm";
import type { Transaction } from "@/db/client";
import { idempotencyKeys } from "@/db/schema";
import type { AgentActor } from "@/lib/auth/actor";
import { ConflictError, InvalidRequestError } from "@/lib/errors";
import { sha256Hex } from "@/lib/ids";

// `Idempotency-Key`: a retried create answers the first result. Checked and recorded inside the
// create's own write transaction, so concurrent retries serialize and exactly one creates.

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

/** The id created by an earlier request with the same key, or null when this is the first. */
export async function previousResult(
  tx: Transaction,
  agent: AgentActor,
  idempotency: Idempotency | null,
  current: (resourceId: string) => Promise<unknown>,
): Promise<string | null> {
  if (!idempotency) return null;
  const [row] = await tx
    .select()
    .from(idempotencyKeys)
    .where(
      and(
        eq(idempotencyKeys.agentKeyId, agent.id),
        eq(idempotencyKeys.scope, idempotency.scope),
        eq(idempotencyKeys.key, idempotency.key),
      ),
    );
  if (!row) return null;
  if (row.requestHash !== idempotency.requestHash) {
    throw new ConflictError(
      "idempotency_conflict",
      "This Idempotency-Key was already used with a different body.",
      await current(row.resourceId),
    );
  }
  return row.resourceId;
}

export async function rememberResult(
  tx: Transaction,
  agent: AgentActor,
  idempotency: Idempotency | null,
  resourceId: string,
): Promise<void> {
  if (!idempotency) return;
  await tx.insert(idempotencyKeys).values({
    agentKeyId: agent.id,
    scope: idempotency.scope,
    key: idempotency.key,
    requestHash: idempotency.requestHash,
    resourceId,
    createdAt: Date.now(),
  });
}
