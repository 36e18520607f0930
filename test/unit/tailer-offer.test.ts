import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { closeDb } from "@/db/client";
import type { EventRow } from "@/db/schema";
import { writeBatch } from "@/db/write-batch";
import { eventRows, SYSTEM_ACTOR } from "@/lib/events/append-event";
import { getTailer } from "@/lib/events/tailer";
import { commit } from "@/lib/events/commit";
import { freshDatabase } from "../support/database";

// A write batch hands the events it appended to this process's streams straight from its answer
// (EventTailer.offer) instead of the tailer reading them back — but only when they are the next
// rows of the log; anything else falls back to reading, so no stream ever skips, repeats or
// reorders an event.

let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await freshDatabase("tailer-offer");
});
afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

const event = (type: string) => ({ type, queueId: null, actor: SYSTEM_ACTOR, data: { type } });

it("delivers committed events without reading them back, and falls back to the log after a foreign write", async () => {
  const tailer = getTailer();
  const seen: EventRow[] = [];
  const unsubscribe = await tailer.subscribe((rows) => seen.push(...rows));
  const read = vi.spyOn(tailer as unknown as { read: () => Promise<void> }, "read");

  await commit([eventRows(event("one"), event("two"))]);
  expect(seen.map((r) => r.type)).toEqual(["one", "two"]);
  expect(read).not.toHaveBeenCalled();

  // Another process's write (not offered here) lands between two of ours.
  await writeBatch([eventRows(event("foreign"))]);
  await commit([eventRows(event("three"))]);
  await vi.waitFor(() => expect(seen).toHaveLength(4));
  expect(read).toHaveBeenCalled();
  expect(seen.map((r) => r.type)).toEqual(["one", "two", "foreign", "three"]);
  const seqs = seen.map((r) => r.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  expect(new Set(seqs).size).toBe(seqs.length);
  expect(seen[0]!.data).toEqual({ type: "one" });
  unsubscribe();
});
