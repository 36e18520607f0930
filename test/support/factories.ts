import { randomUUID } from "node:crypto";
import {
  createAgentKey,
  createQueue,
  createReviewer,
  createReviewerToken,
} from "@/lib/admin/admin-verbs";
import { getDb } from "@/db/client";
import type { QueueRole } from "@/db/schema";
import { authenticate } from "@/lib/auth/actor";

// Actors for tests, made through the same admin verbs as `npm run admin`.

const unique = () => randomUUID().slice(0, 8);

export async function makeQueue(
  options: {
    name?: string;
    requiredApprovals?: number;
    separationOfDuties?: boolean;
    defaultTimeoutSecs?: number;
    approveOnTimeout?: boolean;
    approveOnTimeoutMinSecs?: number;
  } = {},
) {
  return createQueue({ name: options.name ?? `queue-${unique()}`, ...options });
}

export type TestReviewer = { id: string; email: string; name: string; token: string };

export async function makeReviewer(
  options: { name?: string; queues?: { name: string; role?: QueueRole }[] } = {},
): Promise<TestReviewer> {
  const suffix = unique();
  const reviewer = await createReviewer({
    email: `reviewer-${suffix}@example.com`,
    name: options.name ?? `Reviewer ${suffix}`,
    password: "correct horse battery",
    queues: (options.queues ?? []).map((q) => ({ name: q.name, role: q.role ?? "reviewer" })),
  });
  return { ...reviewer, token: await createReviewerToken(reviewer.email) };
}

export type TestAgent = { id: string; key: string; webhookSecret: string };

export async function makeAgentKey(options: {
  name?: string;
  queues: string[];
  ownerEmail?: string;
}): Promise<TestAgent> {
  return createAgentKey({ name: options.name ?? `Agent ${unique()}`, ...options });
}

/** A queue, one reviewer in it, and an agent key targeting it: the common starting point. */
export async function makeTeam(options: { requiredApprovals?: number } = {}) {
  const queue = await makeQueue({ requiredApprovals: options.requiredApprovals });
  const reviewer = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queue.name }] });
  const agent = await makeAgentKey({ name: "Support bot", queues: [queue.name] });
  return { queue, reviewer, agent };
}

/** The actor a bearer token (an agent key, a reviewer token) stands for, as the API would see it. */
export function actorFor(token: string) {
  return authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));
}
