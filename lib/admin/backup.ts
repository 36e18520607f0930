import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { basename, dirname, resolve } from "node:path";
import { createClient } from "@libsql/client";
import { databaseUrl, databaseUrlForDisplay, getClient, untilNotBusy } from "@/db/client";

// `npm run admin -- backup <file>` and `restore <file>`, for the embedded database (file:…).
//
// A backup is `VACUUM INTO`: SQLite writes a compact copy of the database as one read
// transaction sees it, so it is consistent (every write committed before it began, none after)
// and, in WAL mode, taken while the server keeps reading and writing (writers are not blocked;
// the copy costs one read of the database). Copying the file with cp is not: it can catch the
// main file and its -wal at different moments.
//
// A restore replaces the database file with a backup, after checking the backup's integrity;
// it needs the server stopped (a running server keeps the old file open and would go on
// writing to it), and keeps the replaced file aside rather than deleting it.
//
// A libSQL server (DATABASE_URL libsql://, http(s)://) is backed up by the server itself; see
// lib/admin/README.md, "Backups".

const SERVER_BACKUP_HELP =
  "backup and restore work on the embedded database (DATABASE_URL=file:…). For a libSQL server, " +
  "use its own backups: sqld's bottomless replication to S3 (--enable-bottomless-replication), " +
  "or a copy of its data directory taken while it is stopped; Turso keeps point-in-time backups. " +
  "See lib/admin/README.md, “Backups”.";

/** The file of the configured embedded database; an error that explains for a libSQL server. */
function databaseFile(): string {
  const url = databaseUrl();
  if (!url.startsWith("file:"))
    throw new Error(`DATABASE_URL is ${databaseUrlForDisplay(url)}: ${SERVER_BACKUP_HELP}`);
  const path = url.slice("file:".length).split("?")[0]!;
  if (!path || path === ":memory:") throw new Error("An in-memory database cannot be backed up.");
  return resolve(path);
}

const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

/** Copies the configured database to `target` (which must not exist) while it stays in use. */
export async function backupDatabase(target: string): Promise<string> {
  const source = databaseFile();
  const path = resolve(target);
  if (existsSync(path)) throw new Error(`${path} exists already: backup never overwrites a file.`);
  if (!existsSync(dirname(path))) throw new Error(`The folder ${dirname(path)} does not exist.`);
  if (!existsSync(source)) throw new Error(`There is no database at ${source} to back up.`);
  const startedAt = Date.now();
  // A read transaction: it waits for no writer; only a WAL checkpoint that is resetting the log
  // can make it busy for a moment, which untilNotBusy rides out.
  await untilNotBusy(() => getClient().execute({ sql: "VACUUM INTO ?", args: [path] }));
  const problem = await integrityProblem(path);
  if (problem) {
    unlinkSync(path);
    throw new Error(`The copy failed its integrity check (${problem}); nothing was kept.`);
  }
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  return `Backed up ${source} to ${path}: ${megabytes(statSync(path).size)} in ${seconds} s, integrity check ok.`;
}

/** Replaces the configured database with the backup at `backup`; the old file is kept aside. */
export async function restoreDatabase(backup: string): Promise<string> {
  const target = databaseFile();
  const from = resolve(backup);
  if (!existsSync(from)) throw new Error(`There is no backup at ${from}.`);
  if (from === target) throw new Error("That backup is the database itself.");
  const holders = processesHolding(target);
  if (holders.length > 0)
    throw new Error(
      `${target} is open in ${holders.map((h) => `process ${h.pid} (${h.command})`).join(", ")}: ` +
        "stop the server (and any other process using the database) before restoring, then start it again.",
    );
  const problem = await integrityProblem(from);
  if (problem)
    throw new Error(
      `${from} is not a sound Countersign database (${problem}); nothing was changed.`,
    );

  // Copy beside the target first, so the swap itself is one rename on the same file system
  // (into a new folder, as the server creates one for a new database).
  mkdirSync(dirname(target), { recursive: true });
  const incoming = `${target}.restoring-${process.pid}`;
  copyFileSync(from, incoming);
  let keptAt: string | null = null;
  if (existsSync(target)) {
    keptAt = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, "-")}`;
    // The old database with its log: a -wal left by a crash holds commits the main file lacks.
    renameSync(target, keptAt);
    for (const suffix of ["-wal", "-shm"])
      if (existsSync(target + suffix)) renameSync(target + suffix, keptAt + suffix);
  }
  renameSync(incoming, target);
  return [
    `Restored ${from} into ${target}.`,
    keptAt
      ? `The database it replaced is kept at ${keptAt}.`
      : "There was no database there before.",
    "Start the server: it applies any newer migrations to the restored database.",
  ].join("\n");
}

/** Null when the file is a SQLite database with Countersign's tables and passes integrity_check. */
async function integrityProblem(path: string): Promise<string | null> {
  const client = createClient({ url: `file:${path}` });
  try {
    const check = await client.execute("PRAGMA integrity_check");
    const verdict = check.rows.map((row) => String(row[0])).join("; ");
    if (verdict !== "ok") return `integrity_check: ${verdict.slice(0, 300)}`;
    const tables = await client.execute(
      "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('events', 'batches', 'calls')",
    );
    if (Number(tables.rows[0]?.n) !== 3) return "it has none of Countersign's tables";
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  } finally {
    client.close();
  }
}

/**
 * Processes of this machine that have `file` (or its -wal) open, found through /proc (Linux; other
 * systems report none, and lib/admin/README.md asks to stop the server first). Processes of other users
 * are invisible to a non-root user; so is a server on another machine sharing the file.
 */
function processesHolding(file: string): { pid: number; command: string }[] {
  if (!existsSync("/proc/self/fd") || !existsSync(file)) return [];
  const paths = new Set([realpathSync(file), `${realpathSync(file)}-wal`]);
  const holders: { pid: number; command: string }[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let descriptors: string[];
    try {
      descriptors = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue; // gone, or another user's
    }
    const holds = descriptors.some((fd) => {
      try {
        return paths.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
    if (holds) holders.push({ pid, command: commandOf(pid) });
  }
  return holders;
}

function commandOf(pid: number): string {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    return (
      args
        .map((arg) => basename(arg))
        .slice(0, 3)
        .join(" ") || "unknown"
    );
  } catch {
    return "unknown";
  }
}
