import { hashPassword } from "better-auth/crypto";
import { and, count, eq, isNull } from "drizzle-orm";
import { z } from "zod";
import { getDb, writeTransaction } from "@/db/client";
import { appSettings, queues, users } from "@/db/schema";
import { CreateReviewerInput, insertReviewer } from "./admin-verbs";
import { parseInput } from "@/lib/input/parse";
import { ConflictError, ForbiddenError } from "@/lib/errors";
import { newId } from "@/lib/ids";
import { assertSetupNotLimited, checkSetupCode, SETUP_CODE_SETTING } from "@/lib/auth/setup-code";

/** The queue a fresh install starts with, so the first admin and the demo agent meet somewhere. */
export const FIRST_QUEUE_NAME = "General";

export const CreateFirstAdminInput = CreateReviewerInput.omit({ queues: true }).extend({
  /** the one-time code the server printed at start (setup-code.ts) */
  setupCode: z.string().trim().min(1, "enter the setup code").max(100),
});
export type CreateFirstAdminInput = typeof CreateFirstAdminInput._input;

export async function hasAnyUser(): Promise<boolean> {
  const [row] = await getDb().select({ n: count() }).from(users);
  return (row?.n ?? 0) > 0;
}

const alreadySetUp = () =>
  new ConflictError(
    "already_exists",
    "Countersign already has an admin. Sign in, or ask an admin for an account.",
    null,
  );

/**
 * First-run setup: on a database without any account, a visitor with the setup code the server
 * printed (setup-code.ts) becomes an admin of every queue (a "General" queue is made when there is
 * none). Refused once anyone exists; a wrong code is 403 and creates nothing, and too many in a
 * minute are 429.
 */
export async function createFirstAdmin(
  input: unknown,
): Promise<{ id: string; email: string; name: string; queueNames: string[] }> {
  const parsed = parseInput(CreateFirstAdminInput, input);
  assertSetupNotLimited();
  if (await hasAnyUser()) throw alreadySetUp();
  const codeHash = await checkSetupCode(parsed.setupCode);
  const passwordHash = await hashPassword(parsed.password);
  // The write transaction starts with BEGIN IMMEDIATE, so two visitors racing through setup are
  // serialized and the second finds the first's account.
  return writeTransaction(async (tx) => {
    const [existing] = await tx.select({ n: count() }).from(users);
    if ((existing?.n ?? 0) > 0) throw alreadySetUp();
    // The code is used up with this write; a restart that replaced it meanwhile voids this one.
    const used = await tx
      .delete(appSettings)
      .where(and(eq(appSettings.key, SETUP_CODE_SETTING), eq(appSettings.value, codeHash)))
      .returning({ key: appSettings.key });
    if (used.length === 0) {
      throw new ForbiddenError("The setup code changed (the server restarted): use the new one.");
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
