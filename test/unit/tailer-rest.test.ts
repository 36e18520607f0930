import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { closeDb } from "@/db/client";
import type { EventRow } from "@/db/schema";
import { writeBatch } from "@/db/write-batch";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { getTailer } from "@/lib/events/tailer";
import { freshDatabase } from "../support/database";

// An idle instance costs the database nothing: the tailer polls the event log only while a
// stream or long-poll of this process listens, and a first subscriber after a rest starts where
// the log ends now, not where it stopped.

let databaseUrl: string;
beforeAll(async () => {
  process.env.EVENT_POLL_MS = "20";
  databaseUrl = await freshDatabase("tailer-rest");
});
afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

const event = (type: string) => ({ type, queueId: null, actor: SYSTEM_ACTOR, data: { type } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("polls only while someone listens, and resumes at the log's end", async () => {
  const tailer = getTailer();
  const read = vi.spyOn(tailer as unknown as { read: () => Promise<void> }, "read");
  const seen: EventRow[] = [];
  const first = await tailer.subscribe((rows) => seen.push(...rows));
  await sleep(200);
  expect(read.mock.calls.length).toBeGreaterThan(3); // polling, every 20 ms

  // Another process's write reaches the listener through the poll.
  await writeBatch([eventRows(event("while-listening"))]);
  await vi.waitFor(() => expect(seen.map((r) => r.type)).toEqual(["while-listening"]));

  first();
  expect(tailer.subscribers()).toBe(0);
  await sleep(50);
  const readsAtRest = read.mock.calls.length;
  await writeBatch([eventRows(event("while-resting"))]);
  await sleep(300);
  expect(read.mock.calls.length).toBe(readsAtRest);

  // A newcomer starts at the end of the log: what was written at rest was for nobody here.
  const later: EventRow[] = [];
  const second = await tailer.subscribe((rows) => later.push(...rows));
  expect(await tailer.position()).toBe(seen[0]!.seq + 1); // the "while-resting" row
  await writeBatch([eventRows(event("after-rest"))]);
  await vi.waitFor(() => expect(later.map((r) => r.type)).toEqual(["after-rest"]));
  second();
});
