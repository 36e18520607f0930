import { describe, expect, it } from "vitest";
import { Countersign, CountersignError } from "@/lib/sdk/index";
import { backoffMs, parseRetryAfter, retryPolicy } from "@/lib/sdk/retry";

// What the SDK retries and what it never does, against a scripted fetch: every answer is chosen
// by the test, and every request the SDK made is kept to look at.

type Seen = { url: string; method: string; headers: Record<string, string>; body: string };

function scripted(answers: (Response | Error)[]) {
  const seen: Seen[] = [];
  const fetch = async (url: string, init: RequestInit = {}) => {
    seen.push({
      url,
      method: init.method ?? "GET",
      headers: init.headers as Record<string, string>,
      body: String(init.body ?? ""),
    });
    const next = answers.shift();
    if (!next) throw new Error("the script ran out of answers");
    if (next instanceof Error) throw next;
    return next;
  };
  const client = new Countersign({
    baseUrl: "http://countersign.test/",
    apiKey: "cs_agent_test",
    fetch,
    retry: { retries: 3, minDelayMs: 5, maxDelayMs: 200 },
  });
  return { client, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
const apiError = (
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) => json(status, { error: { code, message: `${code}!`, ...extra } }, headers);
const run = { id: "run-1", status: "running" };

describe("retries", () => {
  it("retries no answer, 502, 503 and 504 with one Idempotency-Key for the whole createRun", async () => {
    const { client, seen } = scripted([
      new TypeError("fetch failed"),
      apiError(502, "internal_error"),
      new Response("<html>Service Unavailable</html>", { status: 503 }),
      json(201, run),
    ]);
    expect(await client.createRun({ externalId: "t-1" })).toEqual(run);
    expect(seen).toHaveLength(4);
    expect(seen[0]!.url).toBe("http://countersign.test/api/v1/runs");
    expect(seen[0]!.headers.authorization).toBe("Bearer cs_agent_test");
    const keys = new Set(seen.map((s) => s.headers["idempotency-key"]));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toMatch(/^[\w-]{16,}$/);
    expect(new Set(seen.map((s) => s.body))).toEqual(new Set(['{"externalId":"t-1"}']));

    // The next logical create is another key.
    const again = scripted([json(201, run)]);
    await again.client.createRun({ externalId: "t-1" });
    expect(again.seen[0]!.headers["idempotency-key"]).not.toBe([...keys][0]);
  });

  it("waits for a 429's Retry-After (capped by maxDelayMs) and retries a 408", async () => {
    const { client, seen } = scripted([
      apiError(429, "rate_limited", {}, { "retry-after": "0.15" }),
      apiError(408, "internal_error"),
      json(200, run),
    ]);
    const started = Date.now();
    expect(await client.getRun("run-1")).toEqual(run);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(seen).toHaveLength(3);
  });

  it("does not wait out a Retry-After longer than maxDelayMs: the caller gets it", async () => {
    const { client, seen } = scripted([apiError(429, "rate_limited", {}, { "retry-after": "60" })]);
    const error = (await client.getRun("run-1").catch((e: unknown) => e)) as CountersignError;
    expect(seen).toHaveLength(1);
    expect(error).toMatchObject({ status: 429, code: "rate_limited", retryAfterMs: 60_000 });
  });

  it("never retries another 4xx, and maps the error body onto CountersignError", async () => {
    for (const [status, code] of [
      [400, "invalid_request"],
      [401, "unauthenticated"],
      [404, "not_found"],
      [409, "already_claimed"],
    ] as const) {
      const { client, seen } = scripted([
        apiError(status, code, {
          current: { id: "run-1", status: "resuming" },
          holder: "worker-a",
          issues: status === 400 ? [{ path: "workerId", message: "Required" }] : undefined,
        }),
      ]);
      const error = await client.claim("run-1", { workerId: "w" }).catch((e: unknown) => e);
      expect(seen).toHaveLength(1);
      expect(error).toBeInstanceOf(CountersignError);
      const failure = error as CountersignError;
      expect(failure.status).toBe(status);
      expect(failure.is(code)).toBe(true);
      expect(CountersignError.is(failure, code)).toBe(true);
      expect(failure.message).toBe(`${code}!`);
      expect(failure.current).toEqual({ id: "run-1", status: "resuming" });
      expect(failure.details.holder).toBe("worker-a");
      if (status === 400)
        expect(failure.issues).toEqual([{ path: "workerId", message: "Required" }]);
    }
  });

  it("gives up after the configured retries with a network_error (status 0)", async () => {
    const { client, seen } = scripted(
      Array.from({ length: 4 }, () => new TypeError("fetch failed")),
    );
    const error = (await client.getBatch("b-1").catch((e: unknown) => e)) as CountersignError;
    expect(seen).toHaveLength(4);
    expect(error.code).toBe("network_error");
    expect(error.status).toBe(0);
  });

  it("stops at once when the caller aborts, even between retries", async () => {
    const client = new Countersign({
      baseUrl: "http://countersign.test",
      apiKey: "cs_agent_test",
      fetch: async () => apiError(503, "internal_error"),
      retry: { retries: 5, minDelayMs: 10_000, maxDelayMs: 10_000 },
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("stop")), 20);
    const started = Date.now();
    await expect(client.getRun("run-1", { signal: controller.signal })).rejects.toThrow("stop");
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("takes a retried complete that finds the run completed as the first attempt's success", async () => {
    const completed = { id: "run-1", status: "completed" };
    const { client } = scripted([
      new TypeError("fetch failed"),
      apiError(409, "run_terminal", { current: completed }),
    ]);
    expect(await client.completeRun("run-1", { claimToken: "t", outcome: "completed" })).toEqual(
      completed,
    );
    // The same 409 on a first attempt is a real conflict.
    const first = scripted([apiError(409, "run_terminal", { current: completed })]);
    await expect(
      first.client.completeRun("run-1", { claimToken: "t", outcome: "completed" }),
    ).rejects.toMatchObject({ code: "run_terminal" });
  });
});

describe("backoff", () => {
  it("grows exponentially with jitter, within its bounds, and honours Retry-After up to the cap", () => {
    const policy = retryPolicy({ minDelayMs: 100, maxDelayMs: 1000 });
    for (let attempt = 1; attempt <= 8; attempt++) {
      const ceiling = Math.min(1000, 100 * 2 ** (attempt - 1));
      for (let i = 0; i < 50; i++) {
        const delay = backoffMs(policy, attempt);
        expect(delay).toBeGreaterThanOrEqual(50);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    }
    expect(backoffMs(policy, 1, 300)).toBe(300);
    expect(backoffMs(policy, 1, 60_000)).toBe(1000);
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(parseRetryAfter("soon")).toBeNull();
    expect(retryPolicy(false).retries).toBe(0);
  });
});
