import { randomUUID } from "node:crypto";
import { hashPassword } from "better-auth/crypto";
import { count, eq, max } from "drizzle-orm";
import { getDb, writeTransaction } from "@/db/client";
import {
  accounts,
  batches,
  calls,
  events,
  idempotencyKeys,
  policyRules,
  queueMembers,
  queues,
  rememberedApprovals,
  reviewerTokens,
  runs,
  users,
  votes,
} from "@/db/schema";
import { REVIEWER_TOKEN_PREFIX } from "@/lib/auth/actor";
import { newId, newSecret, sha256Hex } from "@/lib/ids";
import { freshDatabase } from "./database";
import type { ApiClient } from "./http";
import { startServer, type TestServer } from "./server";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "./factories";

// Helpers for the API suites: many reviewers at once, and a snapshot of everything a request
// could write, to prove that a rejected request wrote nothing.

let passwordHash: Promise<string> | undefined;

/**
 * `count` reviewers in one queue, each with a personal token. The same rows as `makeReviewer`, but
 * with one shared password hash: hashing 50 passwords one by one takes longer than the races they feed.
 */
export async function makeReviewers(
  count: number,
  queueName: string | null,
  options: { name?: string } = {},
): Promise<TestReviewer[]> {
  passwordHash ??= hashPassword("correct horse battery");
  const hash = await passwordHash;
  return writeTransaction(async (tx) => {
    const [queue] =
      queueName === null
        ? [null]
        : await tx.select().from(queues).where(eq(queues.name, queueName));
    if (queue === undefined) throw new Error(`No queue named ${queueName}`);
    const made: TestReviewer[] = [];
    for (let i = 0; i < count; i++) {
      const suffix = randomUUID().slice(0, 8);
      const id = newId();
      const now = new Date();
      const reviewer = {
        id,
        email: `bulk-${suffix}@example.com`,
        name: options.name ?? `Bulk Reviewer ${suffix}`,
      };
      await tx
        .insert(users)
        .values({ ...reviewer, emailVerified: true, createdAt: now, updatedAt: now });
      await tx.insert(accounts).values({
        id: newId(),
        accountId: id,
        providerId: "credential",
        userId: id,
        password: hash,
        createdAt: now,
        updatedAt: now,
      });
      if (queue)
        await tx
          .insert(queueMembers)
          .values({ queueId: queue.id, userId: id, role: "reviewer", createdAt: now.getTime() });
      const token = newSecret(REVIEWER_TOKEN_PREFIX);
      await tx.insert(reviewerTokens).values({
        id: newId(),
        userId: id,
        tokenHash: sha256Hex(token),
        tokenPrefix: token.slice(0, REVIEWER_TOKEN_PREFIX.length + 6),
        createdAt: now.getTime(),
      });
      made.push({ ...reviewer, token });
    }
    return made;
  });
}

/**
 * The reviewers an authorization check calls with: a member of another queue only (`elsewhere`),
 * a reviewer and a lead to add to the queues under test, and an installation admin (an admin of
 * yet another queue).
 */
export async function makeCallerReviewers() {
  const elsewhere = await makeQueue();
  const adminsQueue = await makeQueue();
  const [nonMember] = await makeReviewers(1, elsewhere.name, { name: "Nora Outsider" });
  const [reviewer] = await makeReviewers(1, null, { name: "Riley Reviewer" });
  const [lead] = await makeReviewers(1, null, { name: "Lee Lead" });
  const admin = await makeReviewer({
    name: "Ada Admin",
    queues: [{ name: adminsQueue.name, role: "admin" }],
  });
  return { elsewhere, people: { nonMember: nonMember!, reviewer: reviewer!, lead: lead!, admin } };
}

/** `makeTeam` (a queue, one reviewer in it, an agent key for it) without a password hash per reviewer. */
export async function makeQuickTeam(
  options: Pick<
    Parameters<typeof makeQueue>[0] & {},
    "requiredApprovals" | "approveOnTimeout" | "approveOnTimeoutMinSecs"
  > = {},
) {
  const queue = await makeQueue(options);
  const [reviewer] = await makeReviewers(1, queue.name, { name: "Dana Reviewer" });
  const agent = await makeAgentKey({ name: "Support bot", queues: [queue.name] });
  return { queue, reviewer: reviewer!, agent };
}

export type WriteSnapshot = Record<string, number>;

/** Row counts of every table a request can write, and the newest event's seq. */
export async function writeSnapshot(): Promise<WriteSnapshot> {
  const db = getDb();
  const counted = async (table: Parameters<ReturnType<typeof db.select>["from"]>[0]) =>
    (await db.select({ n: count() }).from(table))[0]!.n;
  const [lastSeq] = await db.select({ seq: max(events.seq) }).from(events);
  return {
    runs: await counted(runs),
    batches: await counted(batches),
    calls: await counted(calls),
    votes: await counted(votes),
    events: await counted(events),
    idempotencyKeys: await counted(idempotencyKeys),
    rememberedApprovals: await counted(rememberedApprovals),
    policyRules: await counted(policyRules),
    lastSeq: lastSeq?.seq ?? 0,
  };
}

/**
 * One run's rows and events as they are now: a "nothing changed" check that other tests running
 * at the same time cannot disturb.
 */
export async function rowsOf(runId: string) {
  const db = getDb();
  return {
    run: (await db.select().from(runs).where(eq(runs.id, runId)))[0],
    batches: await db.select().from(batches).where(eq(batches.runId, runId)),
    calls: await db.select().from(calls).where(eq(calls.runId, runId)),
    events: await db
      .select({ seq: events.seq, type: events.type })
      .from(events)
      .where(eq(events.runId, runId)),
  };
}

/**
 * `startServer` over a fresh database, checked to be this test's server: between picking a free port
 * and listening on it, another process (another suite's server) may take the port, and its health
 * check would pass. A token that exists only in this database tells them apart.
 */
export async function startApiServer(
  label: string,
  env: Record<string, string> = {},
): Promise<TestServer> {
  return startServer({ databaseUrl: await freshDatabase(label), env });
}

/** A run paused on a batch (one call unless `batch` says otherwise), as the agent sees it. */
export async function pausedRun(
  agent: ApiClient,
  batch: Record<string, unknown>,
  run: Record<string, unknown> = {},
) {
  const created = await agent.post("/runs", { ...run, batch });
  if (created.status !== 201)
    throw new Error(`POST /runs answered ${created.status}: ${JSON.stringify(created.body)}`);
  return { run: created.body, batch: created.body.batches[0] };
}

/** Approves every call of a batch at its current revision (one reviewer; quorum 1). */
export async function approveBatch(
  reviewer: ApiClient,
  batch: { id: string; calls: { id: string; revision: number }[] },
) {
  const answer = await reviewer.post(`/batches/${batch.id}/decision`, {
    outcome: "approve",
    expectedRevisions: Object.fromEntries(batch.calls.map((c) => [c.id, c.revision])),
  });
  if (answer.status !== 200)
    throw new Error(`batch decision answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body;
}
