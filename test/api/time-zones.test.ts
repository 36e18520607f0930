import { eq, max } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { batches, events, users } from "@/db/schema";
import { approveBatch, pausedRun, startApiServer } from "../support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { apiClient, type ApiClient } from "../support/http";
import type { TestServer } from "../support/server";

// Issue 16, item 5 over real HTTP: a person's own time zone (GET/PATCH /me), costs in the
// currency a call states, and the history's From/To days taken as days in the viewer's zone.

let server: TestServer;
let dana: TestReviewer;
let asDana: ApiClient;
let asOlga: ApiClient;
let agent: ApiClient;

beforeAll(async () => {
  server = await startApiServer("time-zones");
  const queue = await makeQueue();
  dana = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queue.name }] });
  const olga = await makeReviewer({ name: "Olga Other" });
  const key = await makeAgentKey({ name: "Billing bot", queues: [queue.name] });
  asDana = apiClient(server.baseUrl, dana.token);
  asOlga = apiClient(server.baseUrl, olga.token);
  agent = apiClient(server.baseUrl, key.key);
});

afterAll(async () => {
  await server?.stop();
});

const patch = (client: ApiClient, body: unknown, headers: Record<string, string> = {}) =>
  client.raw("/me", {
    method: "PATCH",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

/** What a refused PATCH must leave alone: the person's row and the event log. */
async function stored(userId: string) {
  const db = getDb();
  const [user] = await db
    .select({ timeZone: users.timeZone, updatedAt: users.updatedAt })
    .from(users)
    .where(eq(users.id, userId));
  const [last] = await db.select({ seq: max(events.seq) }).from(events);
  return { user, lastSeq: last?.seq ?? 0 };
}

describe("GET/PATCH /me: one's own time zone", () => {
  it("starts unset (follow the browser), and stores a zone in its canonical spelling", async () => {
    const before = await asDana.get("/me");
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      id: dana.id,
      name: "Dana Reviewer",
      email: dana.email,
      timeZone: null,
      shortcutsEnabled: true,
    });

    const saved = await patch(asDana, { timeZone: "europe/berlin" });
    expect(saved.status).toBe(200);
    expect((await saved.json()).timeZone).toBe("Europe/Berlin");
    expect((await asDana.get("/me")).body.timeZone).toBe("Europe/Berlin");
    const [event] = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "person.settings_updated"));
    expect(event).toMatchObject({
      queueId: null,
      actorId: dana.id,
      data: { userId: dana.id, timeZone: { before: null, after: "Europe/Berlin" } },
    });

    // null goes back to following the browser
    const cleared = await patch(asDana, { timeZone: null });
    expect((await cleared.json()).timeZone).toBeNull();
  });

  it("turns single-key shortcuts off and on, leaving the zone alone, with an event", async () => {
    await patch(asDana, { timeZone: "Asia/Kolkata" });
    const off = await patch(asDana, { shortcutsEnabled: false });
    expect(off.status).toBe(200);
    expect(await off.json()).toMatchObject({ shortcutsEnabled: false, timeZone: "Asia/Kolkata" });
    expect((await asDana.get("/me")).body).toMatchObject({
      shortcutsEnabled: false,
      timeZone: "Asia/Kolkata",
    });
    const written = await getDb()
      .select()
      .from(events)
      .where(eq(events.type, "person.settings_updated"));
    expect(written.at(-1)).toMatchObject({
      actorId: dana.id,
      data: { userId: dana.id, shortcutsEnabled: { before: true, after: false } },
    });
    expect(written.at(-1)!.data).not.toHaveProperty("timeZone");
    // the same value again writes nothing
    await patch(asDana, { shortcutsEnabled: false });
    expect(
      await getDb().select().from(events).where(eq(events.type, "person.settings_updated")),
    ).toHaveLength(written.length);
    for (const body of [{ shortcutsEnabled: "no" }, { shortcutsEnabled: 0 }]) {
      expect((await patch(asDana, body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await (await patch(asDana, { shortcutsEnabled: true })).json()).shortcutsEnabled).toBe(
      true,
    );
  });

  it("refuses a zone that is not one, or any other field, with 400 and writes nothing", async () => {
    await patch(asDana, { timeZone: "Asia/Kolkata" });
    const before = await stored(dana.id);
    for (const body of [
      { timeZone: "Mars/Olympus_Mons" },
      { timeZone: "+05:30" },
      { timeZone: 330 },
      {},
      { timeZone: "UTC", name: "Someone Else" },
    ]) {
      const answer = await patch(asDana, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      const { error } = await answer.json();
      expect(error.code).toBe("invalid_request");
      expect(error.issues.length).toBeGreaterThan(0);
    }
    expect((await patch(asDana, "{not json")).status).toBe(400);
    expect((await patch(asDana, "x", { "content-type": "text/plain" })).status).toBe(415);
    expect(await stored(dana.id)).toEqual(before);
  });

  it("is a person's own: no credential is 401, an agent key 403, and nobody names another", async () => {
    const anonymous = apiClient(server.baseUrl);
    expect((await anonymous.get("/me")).status).toBe(401);
    expect((await patch(anonymous, { timeZone: "UTC" })).status).toBe(401);
    expect((await agent.get("/me")).status).toBe(403);
    expect((await patch(agent, { timeZone: "UTC" })).status).toBe(403);
    // Olga's change is Olga's alone
    const before = (await asDana.get("/me")).body.timeZone;
    expect((await patch(asOlga, { timeZone: "Pacific/Auckland" })).status).toBe(200);
    expect((await asOlga.get("/me")).body.timeZone).toBe("Pacific/Auckland");
    expect((await asDana.get("/me")).body.timeZone).toBe(before);
    expect((await asDana.raw("/me", { method: "DELETE" })).status).toBe(405);
  });
});

describe("costs in the call's currency", () => {
  it("keeps the ISO 4217 code a call states (USD when none), and refuses an unknown one", async () => {
    const call = (extra: Record<string, unknown>) => ({
      toolCallId: `c-${Math.random().toString(36).slice(2, 8)}`,
      toolName: "refund_order",
      args: { orderId: "A-1" },
      costEstimate: 1234,
      ...extra,
    });
    const { batch } = await pausedRun(agent, { calls: [call({ costCurrency: "jpy" }), call({})] });
    expect(batch.calls.map((c: { costCurrency: string }) => c.costCurrency)).toEqual([
      "JPY",
      "USD",
    ]);
    const refused = await agent.post("/runs", {
      batch: { calls: [call({ costCurrency: "ZZZ" }), call({ costCurrency: "EURO" })] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.issues.map((i: { path: string }) => i.path)).toEqual([
      "batch.calls.0.costCurrency",
      "batch.calls.1.costCurrency",
    ]);
  });
});

describe("the history's days are the viewer's days", () => {
  // Decided around midnight in Kolkata (+05:30) on 8 March 2026, and around midnight in UTC.
  const decidedAt = {
    kolkataDay7Last: "2026-03-07T18:29:59.999Z", // 7 Mar, 23:59:59.999 in Kolkata
    kolkataDay8First: "2026-03-07T18:30:00.000Z", // 8 Mar, 00:00 in Kolkata
    kolkataDay8Last: "2026-03-08T18:29:59.000Z", // 8 Mar, 23:59:59 in Kolkata
    kolkataDay9First: "2026-03-08T18:30:00.000Z", // 9 Mar, 00:00 in Kolkata
    utcDay9First: "2026-03-09T00:00:00.000Z", // 9 Mar UTC; 8 Mar, 20:00 in New York (EDT)
  };
  const idOf: Record<string, string> = {};

  beforeAll(async () => {
    for (const [name, at] of Object.entries(decidedAt)) {
      const { batch } = await pausedRun(agent, {
        calls: [{ toolCallId: name, toolName: name, args: {} }],
      });
      await approveBatch(asDana, batch);
      // The decision really happened now; its time is moved to the instant under test.
      await getDb()
        .update(batches)
        .set({ decidedAt: Date.parse(at) })
        .where(eq(batches.id, batch.id));
      idOf[batch.id] = name;
    }
  });

  const day = async (query: string) => {
    const answer = await asDana.get(`/history?${query}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.batches
      .map((b: { id: string }) => idOf[b.id])
      .filter(Boolean)
      .sort();
  };

  it("takes a date as a whole day in the given zone, to the millisecond", async () => {
    expect(await day("from=2026-03-08&to=2026-03-08&timeZone=Asia/Kolkata")).toEqual([
      "kolkataDay8First",
      "kolkataDay8Last",
    ]);
    expect(await day("from=2026-03-09&timeZone=Asia/Kolkata")).toEqual([
      "kolkataDay9First",
      "utcDay9First",
    ]);
    expect(await day("to=2026-03-07&timeZone=Asia/Kolkata")).toEqual(["kolkataDay7Last"]);
  });

  it("a DST day is 23 hours; without a zone a day is UTC's, as before", async () => {
    // 8 March in New York: 05:00Z to 03:59:59.999Z the next day (clocks jump at 02:00)
    expect(await day("from=2026-03-08&to=2026-03-08&timeZone=America/New_York")).toEqual([
      "kolkataDay8Last",
      "kolkataDay9First",
      "utcDay9First",
    ]);
    expect(await day("from=2026-03-08&to=2026-03-08")).toEqual([
      "kolkataDay8Last",
      "kolkataDay9First",
    ]);
  });

  it("the export filters the same days; an unknown zone is 400", async () => {
    const file = await asDana.raw(
      "/history/export?format=json&from=2026-03-08&to=2026-03-08&timeZone=Asia/Kolkata",
    );
    expect(file.status).toBe(200);
    const names = ((await file.json()).batches as { id: string }[]).map((b) => idOf[b.id]).sort();
    expect(names).toEqual(["kolkataDay8First", "kolkataDay8Last"]);
    const refused = await asDana.get("/history?from=2026-03-08&timeZone=Mars/Base");
    expect(refused.status).toBe(400);
    expect(refused.body.error.issues.map((i: { path: string }) => i.path)).toEqual(["timeZone"]);
  });
});
