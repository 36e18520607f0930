import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAdminCli } from "../support/admin-cli";
import { approveBatch, makeQuickTeam, pausedRun } from "../support/api-fixtures";
import { freshDatabase } from "../support/database";
import { apiClient, refundBatch } from "../support/http";
import { startServer, type TestServer } from "../support/server";

// `npm run admin -- backup` taken from a real server under a load of decisions, restored into a
// new place, served again: the copy passes integrity_check and holds every decision acknowledged
// before the backup began (and, being one moment's copy, none acknowledged after it ended).

/** A decision: when its request was sent, and when its 200 came back (acknowledged). */
type Acknowledged = { batchId: string; callId: string; sentAt: number; at: number };

const dir = mkdtempSync(join(tmpdir(), "countersign-backup-"));
const backupFile = join(dir, "backup.db");
const restoredUrl = `file:${join(dir, "restored", "countersign.db")}`;
let databaseUrl: string;
let server: TestServer;
let restoredServer: TestServer | undefined;
let team: Awaited<ReturnType<typeof makeQuickTeam>>;

beforeAll(async () => {
  databaseUrl = await freshDatabase("backup");
  team = await makeQuickTeam();
  server = await startServer({ databaseUrl });
}, 60_000);

afterAll(async () => {
  await Promise.all([server?.stop(), restoredServer?.stop()]);
});

async function integrityOf(url: string): Promise<string> {
  const client = createClient({ url });
  try {
    return String((await client.execute("PRAGMA integrity_check")).rows[0]?.[0]);
  } finally {
    client.close();
  }
}

describe("backup under load, then restore", () => {
  const acknowledged: Acknowledged[] = [];
  let backupStartedAt = 0;
  let backupEndedAt = 0;

  it("copies the running server's database while decisions keep being made", async () => {
    const agent = apiClient(server.baseUrl, team.agent.key);
    const reviewer = apiClient(server.baseUrl, team.reviewer.token);
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const { batch } = await pausedRun(agent, refundBatch());
        const sentAt = Date.now();
        await approveBatch(reviewer, batch);
        acknowledged.push({ batchId: batch.id, callId: batch.calls[0].id, sentAt, at: Date.now() });
      }
    };
    const workers = Array.from({ length: 4 }, worker);
    await new Promise((resolve) => setTimeout(resolve, 1500));

    backupStartedAt = Date.now();
    const backup = await runAdminCli(databaseUrl, "backup", backupFile);
    backupEndedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 500));
    stop = true;
    await Promise.all(workers);

    expect(backup.stderr).toBe(`Database: ${databaseUrl} (DATABASE_URL from the environment)\n`);
    expect(backup.code).toBe(0);
    expect(backup.stdout).toMatch(
      /^Backed up .* to .*backup\.db: \d+\.\d MB in \d+\.\d s, integrity check ok\.$/m,
    );
    const before = acknowledged.filter((a) => a.at < backupStartedAt).length;
    const after = acknowledged.filter((a) => a.sentAt > backupEndedAt).length;
    // The load really ran on both sides of the backup.
    expect(before).toBeGreaterThan(10);
    expect(after).toBeGreaterThan(0);
  }, 60_000);

  it("refuses to overwrite a file, and explains what to do for a libSQL server", async () => {
    const [again, remote] = await Promise.all([
      runAdminCli(databaseUrl, "backup", backupFile),
      runAdminCli("http://127.0.0.1:1", "backup", join(dir, "remote.db")),
    ]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists already: backup never overwrites a file");
    expect(remote.code).toBe(1);
    expect(remote.stderr).toContain("--enable-bottomless-replication");
    expect(existsSync(join(dir, "remote.db"))).toBe(false);
  }, 30_000);

  it("refuses to restore over the database of a running server, or from a damaged file", async () => {
    const damaged = join(dir, "damaged.db");
    writeFileSync(damaged, "SQLite format 3\0 but not really a database");
    const [running, broken] = await Promise.all([
      runAdminCli(databaseUrl, "restore", backupFile),
      runAdminCli(restoredUrl, "restore", damaged),
    ]);
    expect(running.code).toBe(1);
    expect(running.stderr).toContain(`process ${server.process.pid} (`);
    expect(running.stderr).toContain("stop the server");
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain("is not a sound Countersign database");
    expect(existsSync(join(dir, "restored"))).toBe(false);
  }, 30_000);

  it("restores into a new place; a server there has every decision acknowledged before the backup", async () => {
    const restored = await runAdminCli(restoredUrl, "restore", backupFile);
    expect(restored.stderr).toBe(`Database: ${restoredUrl} (DATABASE_URL from the environment)\n`);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain("There was no database there before.");

    restoredServer = await startServer({ databaseUrl: restoredUrl });
    const reviewer = apiClient(restoredServer.baseUrl, team.reviewer.token);
    const outcomeOf = async ({ batchId, callId }: Acknowledged) => {
      const answer = await reviewer.get(`/batches/${batchId}`);
      if (answer.status === 404) return "missing";
      const call = answer.body.calls.find((c: { id: string }) => c.id === callId);
      return `${answer.body.status}/${call?.decision?.outcome}`;
    };
    const before = acknowledged.filter((a) => a.at < backupStartedAt);
    const outcomesBefore = await Promise.all(before.map(outcomeOf));
    expect(outcomesBefore.filter((o) => o !== "decided/approved")).toEqual([]);
    // Decided only after the copy was made: not in it (the batch may be, still pending).
    const after = acknowledged.filter((a) => a.sentAt > backupEndedAt);
    const outcomesAfter = await Promise.all(after.map(outcomeOf));
    expect(outcomesAfter.filter((o) => o === "decided/approved")).toEqual([]);
  }, 60_000);

  it("keeps the replaced database aside when restoring over one; both pass integrity_check", async () => {
    await restoredServer!.stop();
    restoredServer = undefined;
    const again = await runAdminCli(restoredUrl, "restore", backupFile);
    expect(again.stderr).toBe(`Database: ${restoredUrl} (DATABASE_URL from the environment)\n`);
    expect(again.code).toBe(0);
    const keptAt = /kept at (\S+)\.$/m.exec(again.stdout)?.[1];
    expect(keptAt).toBeDefined();
    // The restored database, as the server left it, is the one kept aside: sound.
    expect(await integrityOf(`file:${keptAt}`)).toBe("ok");
    expect(await integrityOf(restoredUrl)).toBe("ok");
    expect(readdirSync(join(dir, "restored")).filter((f) => f.includes("restoring"))).toEqual([]);
  }, 30_000);
});
