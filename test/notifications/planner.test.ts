import { eq, inArray } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { getDb } from "@/db/client";
import { notificationCursors, notifications } from "@/db/schema";
import type { AgentActor } from "@/lib/auth/actor";
import { setNotificationPreference } from "@/lib/notifications/preferences";
import { planNotifications } from "@/lib/notifications/plan-notifications";
import { createRun } from "@/lib/runs/create-run";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer, type TestReviewer } from "../support/factories";
import { refundBatch } from "../support/http";

// The planner in this process, without a server: several passes racing over the same stretch of
// the event log (as several app instances do) plan each (event, person, channel) exactly once,
// and the first pass ever mails no history.

let agent: AgentActor;
let people: TestReviewer[];
const EVENTS = { newCards: true, deadlines: true, escalations: true, decisions: true };

beforeAll(async () => {
  await freshDatabase("notification-planner");
  const queue = await makeQueue();
  const key = await makeAgentKey({ queues: [queue.name] });
  agent = {
    kind: "agent",
    id: key.id,
    name: "Planner bot",
    defaultQueueId: queue.id,
    queueIds: [queue.id],
    ownerUserId: null,
    mode: "ask",
  };
  people = [];
  for (let i = 0; i < 3; i++) {
    const person = await makeReviewer({ queues: [{ name: queue.name }] });
    people.push(person);
    await setNotificationPreference(
      { kind: "reviewer", id: person.id, name: person.name, email: person.email },
      queue.id,
      { delivery: i === 2 ? "off" : "immediate", events: EVENTS },
    );
  }
});

const cardsFor = async (batchIds: string[]) =>
  getDb().select().from(notifications).where(inArray(notifications.batchId, batchIds));

describe("the notification planner", () => {
  it("starts from now: what happened before its first pass is never mailed", async () => {
    const { run } = await createRun(agent, { batch: refundBatch() });
    expect(await planNotifications()).toBe(0);
    expect(await planNotifications()).toBe(0);
    expect(await cardsFor([run.batches![0]!.id])).toEqual([]);
    expect(await getDb().select().from(notificationCursors)).toHaveLength(2);
  });

  it("plans each card once per subscribed person, however many passes race", async () => {
    const batchIds: string[] = [];
    for (let i = 0; i < 5; i++)
      batchIds.push((await createRun(agent, { batch: refundBatch() })).run.batches![0]!.id);
    const planned = await Promise.all(Array.from({ length: 6 }, () => planNotifications()));
    // one pass won the stretch; the others found the cursor moved and wrote nothing
    expect(planned.reduce((a, b) => a + b, 0)).toBe(10);
    expect(await planNotifications()).toBe(0);
    const rows = await cardsFor(batchIds);
    expect(rows).toHaveLength(10);
    expect(new Set(rows.map((r) => `${r.eventKey}|${r.userId}`)).size).toBe(10);
    // the person who chose "off" gets nothing; the others one new-card row per card
    expect(rows.map((r) => r.userId)).not.toContain(people[2]!.id);
    for (const row of rows) expect(row).toMatchObject({ kind: "new_card", status: "pending" });
    const [cursor] = await getDb()
      .select()
      .from(notificationCursors)
      .where(eq(notificationCursors.name, "events"));
    expect(cursor!.position).toBeGreaterThan(0);
  });
});
