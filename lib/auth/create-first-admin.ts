import { hashPassword } from "better-auth/crypto";
import { count, isNull } from "drizzle-orm";
import { getDb, writeTransaction } from "@/db/client";
import { queues, users } from "@/db/schema";
import { CreateReviewerInput, insertReviewer } from "@/lib/admin/admin-verbs";
import { parseInput } from "@/lib/api/parse";
import { ConflictError } from "@/lib/errors";
import { newId } from "@/lib/ids";

/** The queue a fresh install starts with, so the first admin and the demo agent meet somewhere. */
export const FIRST_QUEUE_NAME = "General";

export const CreateFirstAdminInput = CreateReviewerInput.omit({ queues: true });
export type CreateFirstAdminInput = typeof CreateFirstAdminInput._input;

export async function hasAnyUser(): Promise<boolean> {
  const [row] = await getDb().select({ n: count() }).from(users);
  return (row?.n ?? 0) > 0;
}

/**
 * First-run setup: on a database without any account, the first visitor becomes an admin of every
 * queue (a "General" queue is made when there is none). Refused once anyone exists.
 */
export async function createFirstAdmin(
  input: unknown,
): Promise<{ id: string; email: string; name: string; queueNames: string[] }> {
  const parsed = parseInput(CreateFirstAdminInput, input);
  const passwordHash = await hashPassword(parsed.password);
  // The write transaction starts with BEGIN IMMEDIATE, so two visitors racing through setup are
  // serialized and the second finds the first's account.
  return writeTransaction(async (tx) => {
    const [existing] = await tx.select({ n: count() }).from(users);
    if ((existing?.n ?? 0) > 0) {
      throw new ConflictError(
        "already_exists",
        "Countersign already has an admin. Sign in, or ask an admin for an account.",
        null,
      );
    }
    let open = await tx.select().from(queues).where(isNull(queues.archivedAt));
    if (open.length === 0) {
      open = await tx
        .insert(queues)
        .values({ id: newId(), name: FIRST_QUEUE_NAME, createdAt: Date.now() })
        .returning();
    }
    const id = await insertReviewer(
      tx,
      parsed,
      passwordHash,
      open.map((q) => ({ queueId: q.id, role: "admin" as const })),
    );
    return { id, email: parsed.email, name: parsed.name, queueNames: open.map((q) => q.name) };
  });
}
