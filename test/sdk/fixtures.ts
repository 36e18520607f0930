import { and, asc, count, eq } from "drizzle-orm";
import { expect } from "vitest";
import { getDb } from "@/db/client";
import { batches, events, runs } from "@/db/schema";
import { Countersign, type CountersignOptions } from "@/lib/sdk/index";
import { makeQuickTeam, makeReviewers } from "@/test/support/api-fixtures";
import { apiClient, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";

// The SDK suites' common ground: a team whose agent speaks through the SDK and whose reviewers
// decide over the API, as people in the web app would.

export type SdkTeam = {
  queue: { id: string; name: string };
  agentKey: string;
  agentId: string;
  /** the SDK client of the team's agent */
  client: Countersign;
  reviewer: ApiClient;
  reviewerName: string;
  /** an SDK client for the same agent with other options (a proxy's address, another fetch…) */
  clientWith: (options?: Partial<CountersignOptions>) => Countersign;
};

/** Short backoffs: the suites test that retries happen, not how long they take. */
export const FAST_RETRY = { retries: 4, minDelayMs: 20, maxDelayMs: 200 };

export async function sdkTeam(
  baseUrl: string,
  options: { requiredApprovals?: number } = {},
): Promise<SdkTeam & { secondReviewer: () => Promise<ApiClient> }> {
  const { queue, reviewer, agent } = await makeQuickTeam(options);
  const clientWith = (extra: Partial<CountersignOptions> = {}) =>
    new Countersign({ baseUrl, apiKey: agent.key, retry: FAST_RETRY, ...extra });
  return {
    queue,
    agentKey: agent.key,
    agentId: agent.id,
    client: clientWith(),
    reviewer: apiClient(baseUrl, reviewer.token),
    reviewerName: reviewer.name,
    clientWith,
    secondReviewer: async () => {
      const [another] = await makeReviewers(1, queue.name, { name: "Lee Reviewer" });
      return apiClient(baseUrl, another!.token);
    },
  };
}

/** The first pending batch of the queue that `test` accepts, as its reviewers see it (waits for it). */
export async function pendingBatch(
  reviewer: ApiClient,
  queueId: string,
  test: (batch: any) => boolean = () => true,
): Promise<any> {
  return waitUntil(
    async () => {
      const { status, body } = await reviewer.get(`/queue?queue=${queueId}&status=pending`);
      expect(status).toBe(200);
      return (body.batches as any[]).find(test);
    },
    { timeoutMs: 10_000, what: "a pending batch in the queue" },
  );
}

/** One reviewer's decision on one call, at the call's current revision. */
export async function decide(
  reviewer: ApiClient,
  call: { id: string; revision: number },
  outcome: "approve" | "reject" | "edit",
  extra: { reason?: string; editedArgs?: Record<string, unknown> } = {},
) {
  const answer = await reviewer.post(`/calls/${call.id}/decision`, {
    outcome,
    expectedRevision: call.revision,
    ...extra,
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body;
}

/** Waits for the pending batch holding a call of `toolName`, and decides its call. */
export async function decideTool(
  team: Pick<SdkTeam, "reviewer" | "queue">,
  toolName: string,
  outcome: "approve" | "reject" | "edit",
  extra: { reason?: string; editedArgs?: Record<string, unknown> } = {},
) {
  const batch = await pendingBatch(team.reviewer, team.queue.id, (b) =>
    b.calls.some((c: any) => c.toolName === toolName),
  );
  return decide(team.reviewer, batch.calls[0], outcome, extra);
}

export async function runCount(agentId: string): Promise<number> {
  const [row] = await getDb().select({ n: count() }).from(runs).where(eq(runs.agentKeyId, agentId));
  return row!.n;
}

export async function batchCount(runId: string): Promise<number> {
  const [row] = await getDb().select({ n: count() }).from(batches).where(eq(batches.runId, runId));
  return row!.n;
}

/** The run's logged events of one type, oldest first. */
export async function eventsOf(runId: string, type: string) {
  return getDb()
    .select()
    .from(events)
    .where(and(eq(events.runId, runId), eq(events.type, type)))
    .orderBy(asc(events.seq));
}
