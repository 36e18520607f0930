import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeDb } from "@/db/client";
import { holdLease, leaseHolder, releaseLease } from "@/lib/cluster/hold-lease";
import { freshDatabase } from "../support/database";

// The lease that picks the one instance doing the cluster's periodic work (lib/cluster): taken
// and renewed by compare-and-swap in one statement, on the database's clock.

let databaseUrl: string;
beforeAll(async () => {
  databaseUrl = await freshDatabase("cluster-lease");
});
afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it("has one holder at a time: renewed by it, taken by another only once it expired", async () => {
  // many instances racing for a free lease: exactly one wins
  const racers = Array.from({ length: 8 }, (_, i) => `host/${1000 + i}/racer`);
  const won = await Promise.all(racers.map((h) => holdLease("background", h, 400)));
  expect(won.filter(Boolean)).toHaveLength(1);
  const holder = racers[won.indexOf(true)]!;
  const other = racers.find((h) => h !== holder)!;
  expect(await leaseHolder("background")).toBe(holder);

  // the holder renews past the first term; the others keep failing meanwhile
  for (let i = 0; i < 4; i++) {
    await sleep(150);
    expect(await holdLease("background", holder, 400)).toBe(true);
    expect(await holdLease("background", other, 400)).toBe(false);
  }

  // the holder stops renewing (it died): once the term ran out, another takes it
  await sleep(450);
  expect(await holdLease("background", other, 400)).toBe(true);
  expect(await holdLease("background", holder, 400)).toBe(false);
  expect(await leaseHolder("background")).toBe(other);
});

it("is taken at once from a holder known to be dead, or one that released it", async () => {
  const [a, b, c] = ["host/1/a", "host/2/b", "host/3/c"];
  await sleep(450); // the first test's lease ran out
  expect(await holdLease("background", a, 60_000)).toBe(true);
  expect(await holdLease("background", b, 60_000)).toBe(false);
  // replacing a holder that is not the current one takes nothing
  expect(await holdLease("background", b, 60_000, c)).toBe(false);
  expect(await holdLease("background", b, 60_000, a)).toBe(true);

  await releaseLease("background", a); // not a's any more: changes nothing
  expect(await holdLease("background", c, 60_000)).toBe(false);
  await releaseLease("background", b);
  expect(await holdLease("background", c, 60_000)).toBe(true);
});
