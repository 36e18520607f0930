import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApiServer } from "@/test/support/api-fixtures";
import { makeTeam } from "@/test/support/factories";
import { apiClient } from "@/test/support/http";
import type { TestServer } from "@/test/support/server";

// Guessing bearer credentials: after 3 unknown keys or tokens from one address within 3 s, that
// address is answered 429 with Retry-After (a valid key's requests too); other addresses are not
// slowed, and the block ends with the window. Addresses are told apart by X-Forwarded-For, as a
// reverse proxy in front of the app reports them.

const LIMIT = 3;
const WINDOW_SECS = 3;

let server: TestServer;
let team: Awaited<ReturnType<typeof makeTeam>>;

beforeAll(async () => {
  server = await startApiServer("bearer-limit", {
    BEARER_FAILURES_PER_WINDOW: String(LIMIT),
    BEARER_FAILURE_WINDOW_SECS: String(WINDOW_SECS),
    // The test client stands in for a reverse proxy on loopback that reports its clients.
    TRUSTED_PROXIES: "127.0.0.1",
  });
  team = await makeTeam();
}, 60_000);
afterAll(() => server?.stop());

const queueAs = (token: string, address: string) =>
  apiClient(server.baseUrl, token).get("/queue", { "x-forwarded-for": address });

describe("bearer credential guessing", () => {
  it("blocks the guessing address after the limit, not valid callers elsewhere, and lifts with the window", async () => {
    const guesser = "198.51.100.7";
    // Both kinds of credential count, as does garbage with neither prefix.
    const guesses = ["cs_agent_guess1", "cs_rev_guess2", "nonsense"];
    for (const guess of guesses)
      expect((await queueAs(guess, `10.9.9.9, ${guesser}`)).status).toBe(401);

    const blocked = await queueAs("cs_rev_guess4", guesser);
    expect(blocked.status).toBe(429);
    expect(blocked.body.error.code).toBe("rate_limited");
    expect(typeof blocked.body.error.message).toBe("string");
    const retryAfter = Number(blocked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECS);
    // The block is decided before the lookup: a right guess is not told apart from a wrong one.
    expect((await queueAs(team.reviewer.token, guesser)).status).toBe(429);

    // Another address, valid credentials: answered at once. Only the last X-Forwarded-For
    // entry (what the nearest proxy saw) names the client, so the guesser cannot hide behind
    // a forged first entry, and writing the guesser's address first does not block others.
    expect((await queueAs(team.reviewer.token, `${guesser}, 203.0.113.5`)).status).toBe(200);
    const agent = await apiClient(server.baseUrl, team.agent.key).post(
      "/runs",
      {},
      { "x-forwarded-for": "203.0.113.6" },
    );
    expect(agent.status).toBe(201);

    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000 + 100));
    expect((await queueAs(team.reviewer.token, guesser)).status).toBe(200);
  });

  it("counts failures only: valid credentials never use up an address's allowance", async () => {
    const busy = "198.51.100.8";
    for (let i = 0; i < LIMIT * 3; i++)
      expect((await queueAs(team.reviewer.token, busy)).status).toBe(200);
    for (let i = 0; i < LIMIT - 1; i++)
      expect((await queueAs(`cs_rev_wrong${i}`, busy)).status).toBe(401);
    expect((await queueAs(team.reviewer.token, busy)).status).toBe(200);
  });
});
