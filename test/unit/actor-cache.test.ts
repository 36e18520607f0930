import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb, type Executor } from "@/db/client";
import { authenticate, type AgentActor } from "@/lib/auth/actor";
import {
  cachedActor,
  cacheGeneration,
  forgetCachedActors,
  rememberActor,
} from "@/lib/auth/actor-cache";
import { sha256Hex } from "@/lib/ids";
import { freshDatabase } from "@/test/support/database";
import { makeTeam } from "@/test/support/factories";

// authenticate remembers who a bearer credential belongs to for a second (lib/auth/actor-cache.ts):
// a remembered credential costs no query, a failed one is never remembered and still counts
// against its address (lib/auth/bearer-failures.ts), and a forget wins over a lookup in flight.

/** A database that fails any query: authenticating against it proves the actor came from memory. */
const noDatabase = new Proxy({} as Executor, {
  get: () => {
    throw new Error("authenticate queried the database");
  },
});

const bearer = (token: string, address = "192.0.2.1") =>
  new Headers({ authorization: `Bearer ${token}`, "x-forwarded-for": address });

let team: Awaited<ReturnType<typeof makeTeam>>;

beforeAll(async () => {
  await freshDatabase("actor-cache");
  team = await makeTeam();
});
afterAll(() => closeDb());

describe("authenticate's cache of actors", () => {
  it("serves a remembered agent key or reviewer token without a query", async () => {
    forgetCachedActors();
    for (const token of [team.agent.key, team.reviewer.token]) {
      const looked = await authenticate(getDb(), bearer(token));
      await expect(authenticate(noDatabase, bearer(token))).resolves.toEqual(looked);
    }
    forgetCachedActors();
    await expect(authenticate(noDatabase, bearer(team.agent.key))).rejects.toThrow(
      "queried the database",
    );
  });

  it("never remembers a failed lookup, and counts each one against the address", async () => {
    process.env.BEARER_FAILURES_PER_WINDOW = "3";
    try {
      const guesser = "198.51.100.23";
      await authenticate(getDb(), bearer(team.agent.key, guesser));
      for (let i = 0; i < 3; i++) {
        await expect(
          authenticate(getDb(), bearer("cs_agent_guess", guesser)),
        ).rejects.toMatchObject({ code: "unauthenticated" });
        // Looked up again every time: a miss is not served from memory.
        await expect(
          authenticate(noDatabase, bearer("cs_agent_guess", "192.0.2.9")),
        ).rejects.toThrow("queried the database");
      }
      // Blocked before the cache too, so a remembered valid key is no oracle for a guesser.
      await expect(authenticate(noDatabase, bearer(team.agent.key, guesser))).rejects.toMatchObject(
        {
          code: "rate_limited",
        },
      );
      await expect(authenticate(noDatabase, bearer(team.agent.key))).resolves.toMatchObject({
        kind: "agent",
      });
    } finally {
      delete process.env.BEARER_FAILURES_PER_WINDOW;
    }
  });

  it("keeps an actor one second, frozen, and drops what a lookup read before a forget", async () => {
    const actor: AgentActor = {
      kind: "agent",
      id: "a1",
      name: "Agent",
      defaultQueueId: "q1",
      queueIds: ["q1"],
      ownerUserId: null,
      mode: "ask",
    };
    const hash = sha256Hex("cs_agent_example");
    rememberActor(hash, actor, cacheGeneration(), 10_000);
    expect(cachedActor(hash, 10_999)).toBe(actor);
    expect(Object.isFrozen(actor) && Object.isFrozen(actor.queueIds)).toBe(true);
    expect(cachedActor(hash, 11_000)).toBeNull();

    const before = cacheGeneration();
    forgetCachedActors();
    rememberActor(hash, { ...actor, mode: "allow" }, before, 10_000);
    expect(cachedActor(hash, 10_001)).toBeNull();
  });

  it("holds at most 10,000 actors, dropping the oldest", () => {
    forgetCachedActors();
    const actor = { kind: "reviewer" as const, id: "u1", name: "Rae", email: "rae@example.com" };
    const now = Date.now();
    for (let i = 0; i <= 10_000; i++)
      rememberActor(`hash-${i}`, { ...actor }, cacheGeneration(), now);
    expect(cachedActor("hash-0", now)).toBeNull();
    expect(cachedActor("hash-1", now)).not.toBeNull();
    expect(cachedActor("hash-10000", now)).not.toBeNull();
    forgetCachedActors();
  });
});
