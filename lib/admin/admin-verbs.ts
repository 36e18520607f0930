import { randomBytes } from "node:crypto";
import { hashPassword } from "better-auth/crypto";
import { eq, inArray } from "drizzle-orm";
import { z } from "zod";
import { getDb, writeTransaction, type Transaction } from "@/db/client";
import {
  accounts,
  agentKeyQueues,
  agentKeys,
  QUEUE_ROLES,
  queueMembers,
  queues,
  reviewerTokens,
  users,
  type Queue,
  type QueueRole,
} from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { AGENT_KEY_PREFIX, REVIEWER_TOKEN_PREFIX } from "@/lib/auth/actor";
import { sealSecret, SECRET_PLACES } from "@/lib/auth/sealed-secrets";
import { ConflictError, InvalidRequestError, NotFoundError } from "@/lib/errors";
import { newId, newSecret, sha256Hex } from "@/lib/ids";
import { SingleLineText } from "@/lib/text/stored-text";

// Operator verbs behind `npm run admin` (and the tests' factories). They run with the
// operator's authority over the configured database: whoever can run them owns the database.

export const CreateQueueInput = z.object({
  name: SingleLineText.trim().min(1).max(100),
  requiredApprovals: z.int().min(1).max(20).default(1),
  separationOfDuties: z.boolean().default(false),
  defaultTimeoutSecs: z
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .default(3600),
  approveOnTimeout: z.boolean().default(false),
  approveOnTimeoutMinSecs: z
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .default(300),
});
export type CreateQueueInput = z.input<typeof CreateQueueInput>;

export async function createQueue(input: CreateQueueInput): Promise<Queue> {
  const parsed = parseInput(CreateQueueInput, input);
  return writeTransaction(async (tx) => {
    const [existing] = await tx.select().from(queues).where(eq(queues.name, parsed.name));
    if (existing)
      throw new ConflictError("already_exists", `A queue named '${parsed.name}' exists.`, existing);
    const [queue] = await tx
      .insert(queues)
      .values({ id: newId(), createdAt: Date.now(), ...parsed })
      .returning();
    return queue!;
  });
}

async function queuesByName(tx: Transaction, names: string[]): Promise<Map<string, Queue>> {
  const rows = names.length
    ? await tx.select().from(queues).where(inArray(queues.name, names))
    : [];
  const byName = new Map(rows.map((q) => [q.name, q]));
  for (const name of names) if (!byName.has(name)) throw new NotFoundError(`Queue '${name}'`);
  return byName;
}

export const CreateReviewerInput = z.object({
  email: z.email().transform((e) => e.toLowerCase()),
  name: SingleLineText.trim().min(1).max(100),
  password: z.string().min(8, "must be at least 8 characters").max(128),
  queues: z
    .array(z.object({ name: SingleLineText.min(1), role: z.enum(QUEUE_ROLES).default("reviewer") }))
    .default([]),
});
export type CreateReviewerInput = z.input<typeof CreateReviewerInput>;

/** A reviewer account that can sign in to the web app (better-auth's credential account). */
export async function createReviewer(
  input: CreateReviewerInput,
): Promise<{ id: string; email: string; name: string }> {
  const parsed = parseInput(CreateReviewerInput, input);
  const passwordHash = await hashPassword(parsed.password);
  return writeTransaction(async (tx) => {
    const [existing] = await tx
      .select({ id: users.id })
      .from(users)
      .where(eq(users.email, parsed.email));
    if (existing)
      throw new ConflictError("already_exists", `A reviewer with email ${parsed.email} exists.`, {
        id: existing.id,
      });
    const byName = await queuesByName(
      tx,
      parsed.queues.map((q) => q.name),
    );
    const memberships = parsed.queues.map((m) => ({
      queueId: byName.get(m.name)!.id,
      role: m.role,
    }));
    const id = await insertReviewer(tx, parsed, passwordHash, memberships);
    return { id, email: parsed.email, name: parsed.name };
  });
}

/** Inserts a better-auth user with its credential account and its queue memberships. */
export async function insertReviewer(
  tx: Transaction,
  person: { email: string; name: string },
  passwordHash: string,
  memberships: { queueId: string; role: QueueRole }[],
): Promise<string> {
  const now = new Date();
  const id = newId();
  await tx.insert(users).values({
    id,
    name: person.name,
    email: person.email,
    emailVerified: true,
    createdAt: now,
    updatedAt: now,
  });
  await tx.insert(accounts).values({
    id: newId(),
    accountId: id,
    providerId: "credential",
    userId: id,
    password: passwordHash,
    createdAt: now,
    updatedAt: now,
  });
  for (const { queueId, role } of memberships) {
    await tx.insert(queueMembers).values({ queueId, userId: id, role, createdAt: now.getTime() });
  }
  return id;
}

/** The id of the queue with this name (operator commands name queues; the API uses ids). */
export async function queueIdByName(name: string): Promise<string> {
  const [queue] = await getDb().select({ id: queues.id }).from(queues).where(eq(queues.name, name));
  if (!queue) throw new NotFoundError(`Queue '${name}'`);
  return queue.id;
}

/** The id of the reviewer with this email. */
export async function userIdByEmail(email: string): Promise<string> {
  const [user] = await getDb()
    .select({ id: users.id })
    .from(users)
    .where(eq(users.email, email.toLowerCase()));
  if (!user) throw new NotFoundError(`Reviewer ${email}`);
  return user.id;
}

/** A new personal token for a reviewer; only its hash is kept, so this is the one time it is shown. */
export async function createReviewerToken(email: string): Promise<string> {
  return writeTransaction(async (tx) => {
    const [user] = await tx.select().from(users).where(eq(users.email, email.toLowerCase()));
    if (!user) throw new NotFoundError(`Reviewer ${email}`);
    const token = newSecret(REVIEWER_TOKEN_PREFIX);
    await tx.insert(reviewerTokens).values({
      id: newId(),
      userId: user.id,
      tokenHash: sha256Hex(token),
      tokenPrefix: token.slice(0, REVIEWER_TOKEN_PREFIX.length + 6),
      createdAt: Date.now(),
    });
    return token;
  });
}

export const CreateAgentKeyInput = z.object({
  name: SingleLineText.trim().min(1).max(100),
  queues: z
    .array(SingleLineText.min(1))
    .min(1, "an agent key needs at least one queue (the first is its default)"),
  ownerEmail: z.email().optional(),
});
export type CreateAgentKeyInput = z.input<typeof CreateAgentKeyInput>;

/** A new agent key (shown once) and its webhook signing secret. */
export async function createAgentKey(
  input: CreateAgentKeyInput,
): Promise<{ id: string; key: string; webhookSecret: string }> {
  const parsed = parseInput(CreateAgentKeyInput, input);
  return writeTransaction(async (tx) => {
    const byName = await queuesByName(tx, parsed.queues);
    let ownerUserId: string | null = null;
    if (parsed.ownerEmail) {
      const [owner] = await tx
        .select({ id: users.id })
        .from(users)
        .where(eq(users.email, parsed.ownerEmail.toLowerCase()));
      if (!owner)
        throw new InvalidRequestError(`No reviewer has the email ${parsed.ownerEmail}.`, [
          { path: "owner", message: "unknown reviewer" },
        ]);
      ownerUserId = owner.id;
    }
    const id = newId();
    const key = newSecret(AGENT_KEY_PREFIX);
    const webhookSecret = `whsec_${randomBytes(24).toString("base64")}`;
    await tx.insert(agentKeys).values({
      id,
      name: parsed.name,
      keyHash: sha256Hex(key),
      keyPrefix: key.slice(0, AGENT_KEY_PREFIX.length + 6),
      defaultQueueId: byName.get(parsed.queues[0]!)!.id,
      ownerUserId,
      // encrypted at rest when COUNTERSIGN_SECRET_KEY is set; shown once here in plain text
      webhookSecret: sealSecret(webhookSecret, SECRET_PLACES.webhookSecret(id)),
      createdAt: Date.now(),
    });
    for (const name of new Set(parsed.queues)) {
      await tx.insert(agentKeyQueues).values({ agentKeyId: id, queueId: byName.get(name)!.id });
    }
    return { id, key, webhookSecret };
  });
}
