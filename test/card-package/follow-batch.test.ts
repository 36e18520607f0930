import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  BatchRefusedError,
  followBatch,
  type FollowBatchOptions,
  type LiveBatch,
} from "@/components/review-card/follow-batch";
import type { Batch } from "@/components/review-card/types";
import { pausedRun, startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient, refundBatch, type ApiClient } from "@/test/support/http";
import { waitUntil } from "@/test/support/polling";
import type { TestServer } from "@/test/support/server";

// What `useBatch` runs (follow-batch.ts), against a real server: a reviewer's token, the run's
// event stream, a reconnect that must replay what it missed, polling where streams cannot pass,
// and refusals that end it. The hook in a browser is e2e/review-card-host.spec.ts.

let server: TestServer;
let team: Awaited<ReturnType<typeof makeTeam>>;
let agent: ApiClient;
let reviewer: ApiClient;

beforeAll(async () => {
  server = await startApiServer("follow-batch");
  team = await makeTeam();
  agent = apiClient(server.baseUrl, team.agent.key);
  reviewer = apiClient(server.baseUrl, team.reviewer.token);
}, 60_000);
afterAll(() => server?.stop());

const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

/** Follows `batchId`, recording every state; `latest()` is the newest. */
function follow(batchId: string, options: Partial<FollowBatchOptions> = {}) {
  const states: LiveBatch[] = [];
  const following = followBatch(
    batchId,
    { baseUrl: server.baseUrl, token: team.reviewer.token, ...options },
    (state) => states.push(state),
  );
  stops.push(following.stop);
  const latest = () => states.at(-1);
  const until = (what: string, test: (state: LiveBatch) => boolean, timeoutMs = 10_000) =>
    waitUntil(() => states.findLast(test), { what, timeoutMs });
  return { states, latest, until };
}

/** A paused run with two calls, so one decision changes the batch without settling it. */
async function twoCallBatch(): Promise<Batch> {
  const base = refundBatch().calls[0]!;
  const { batch } = await pausedRun(
    agent,
    refundBatch({
      calls: [
        { ...base, toolCallId: "first" },
        { ...base, toolCallId: "second", args: { orderId: "A-1002", amount: 30 } },
      ],
    }),
  );
  return batch as Batch;
}

async function approve(call: Batch["calls"][number]) {
  const answer = await reviewer.post(`/calls/${call.id}/decision`, {
    outcome: "approve",
    expectedRevision: call.revision,
  });
  expect(answer.status).toBe(200);
}

describe("followBatch", () => {
  it("goes live, shows each decision as it is made, and stops once the batch is settled", async () => {
    const batch = await twoCallBatch();
    const live = follow(batch.id);
    await live.until("the stream to open", (state) => state.status === "live");
    expect(live.latest()!.batch!.id).toBe(batch.id);

    await approve(batch.calls[0]!);
    await live.until(
      "the first approval",
      (state) => state.batch?.calls[0]!.status === "approved" && state.status === "live",
    );
    expect(live.latest()!.batch!.status).toBe("pending");

    await approve(batch.calls[1]!);
    const settled = await live.until("the settled batch", (state) => state.status === "settled");
    expect(settled.batch!.status).toBe("decided");
    expect(settled.batch!.outcome).toBe("approved");
    expect(settled.error).toBeNull();
  });

  it("reopens a dropped stream with Last-Event-ID and is replayed what it missed", async () => {
    const batch = await twoCallBatch();
    const streamRequests: Headers[] = [];
    let releaseReconnect = () => {};
    const reconnectHeld = new Promise<void>((resolve) => (releaseReconnect = resolve));
    // The first stream is cut right after its first event; the reconnect waits until the test
    // has made a change while nothing was listening.
    const cuttingFetch: typeof fetch = async (input, init) => {
      const url = String(input);
      if (!url.includes("/stream")) return fetch(input, init);
      streamRequests.push(new Headers(init?.headers));
      if (streamRequests.length === 1) {
        const response = await fetch(input, init);
        return new Response(cutAfterFirstEvent(response.body!), response);
      }
      await reconnectHeld;
      return fetch(input, init);
    };
    const live = follow(batch.id, { fetch: cuttingFetch });
    await live.until("the stream to open", (state) => state.status === "live");

    await approve(batch.calls[0]!); // the event the first stream delivers, then drops
    await live.until("the dropped stream", (state) => state.status === "reconnecting");
    const seenBeforeDrop = live.latest()!.batch!;
    await approve(batch.calls[1]!); // made while no stream is open
    releaseReconnect();

    const settled = await live.until("the replayed decision", (s) => s.status === "settled");
    expect(settled.batch!.outcome).toBe("approved");
    expect(seenBeforeDrop.calls[1]!.status).toBe("pending");
    expect(streamRequests).toHaveLength(2);
    expect(streamRequests[0]!.get("last-event-id")).toBeNull();
    expect(streamRequests[1]!.get("last-event-id")).toMatch(/^\d+$/);
  });

  it("polls when event streams cannot get through, and still sees the decision", async () => {
    const batch = await twoCallBatch();
    // A proxy that will not pass event streams.
    const noStreams: typeof fetch = async (input, init) =>
      String(input).includes("/stream")
        ? new Response("<h1>502 Bad Gateway</h1>", {
            status: 502,
            headers: { "content-type": "text/html" },
          })
        : fetch(input, init);
    const live = follow(batch.id, { fetch: noStreams, streamAttempts: 1, pollIntervalMs: 100 });
    await live.until("polling", (state) => state.status === "polling");
    expect(live.latest()!.error?.message).toContain("502");

    await approve(batch.calls[0]!);
    await approve(batch.calls[1]!);
    const settled = await live.until("the polled decision", (s) => s.status === "settled");
    expect(settled.batch!.outcome).toBe("approved");
  });

  it("fails for good on a batch the reviewer may not see, or a token the API refuses", async () => {
    const missing = follow("no-such-batch");
    const notFound = await missing.until("the refusal", (state) => state.status === "failed");
    expect(notFound.error).toBeInstanceOf(BatchRefusedError);
    expect((notFound.error as BatchRefusedError).status).toBe(404);
    expect((notFound.error as BatchRefusedError).code).toBe("not_found");

    const batch = await twoCallBatch();
    const wrongToken = follow(batch.id, { token: "cs_rev_not-a-token" });
    const refused = await wrongToken.until("the refusal", (state) => state.status === "failed");
    expect((refused.error as BatchRefusedError).status).toBe(401);
    expect(refused.batch).toBeNull();
  });
});

/** The stream's bytes up to and including its first complete `id:` message, then its end. */
function cutAfterFirstEvent(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let seen = "";
  return new ReadableStream({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      controller.enqueue(value);
      seen += decoder.decode(value, { stream: true });
      if (/(^|\n)id: \d+\n[\s\S]*?\n\n/.test(seen)) {
        await reader.cancel();
        controller.close();
      }
    },
    cancel: () => reader.cancel(),
  });
}
