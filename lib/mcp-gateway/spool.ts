import { createHash, randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  futimesSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Outcome } from "./outcome-reports.js";

// The outcome reports' spool: a gateway killed with reports still queued (kill -9, a crash, a
// closed laptop) sends them at its next start instead of losing them. One small JSON-lines file
// per gateway process, in a directory per gateway name and agent key (fingerprinted: the key
// itself is never written), under the OS's state directory unless `--spool DIR` says otherwise.
//
// - A report is written (one `write`, appended) before it counts as queued: a process killed
//   after that loses nothing, since the kernel holds what was written. The fsync that makes it
//   survive a power cut follows within SYNC_DELAY_MS, one for all the writes meanwhile, and is
//   skipped when they were all done by then: an fsync on the allowed call's path would cost it
//   2–40 ms on a loaded disk, for the last few milliseconds of reports.
// - A report Countersign accepted (or refused for good) is marked done by a line of its own;
//   when nothing live is left the file is truncated, and it is rewritten (a temporary file,
//   fsync, rename: atomic) when done lines outweigh live ones. Resending a report whose done
//   line was lost is harmless: Countersign records each call's outcome once.
// - At start, files of processes that are gone (no such pid, or not refreshed for STALE_MS: a
//   reused pid) are claimed by an atomic rename (two gateways starting at once never both take
//   one), read (a line that does not parse is skipped with a warning: a torn last write), and
//   their live reports queued here; the claimed file is removed once they are in this one's.
// - Bounded: reports over MAX_LIVE_BYTES are kept in memory only (with a warning), as before.
// - Private: the folder must be this user's alone (0700), and files are opened without following
//   links. A folder another user can write is refused (the gateway runs without a spool, with a
//   warning): what they planted there would be sent under this agent key.
// - A process whose file was taken while it was paused (a closed laptop: its heartbeat late) sees
//   its file unlinked at its next write and writes its live reports into a new one; the reports
//   the other process took are then sent twice, which Countersign answers once.

export type SpooledReport = { runId: string; outcome: Outcome };

/** the most live report bytes a spool file holds */
export const MAX_LIVE_BYTES = 4 * 1024 * 1024;
/** how often a live process touches its file, and after how long an untouched one is taken over */
const HEARTBEAT_MS = 60_000;
const STALE_MS = 5 * HEARTBEAT_MS;
/** how long writes gather before their fsync (a power cut may lose this much, a kill nothing) */
const SYNC_DELAY_MS = 50;
/** below this, a file is not worth rewriting to drop its done lines */
const COMPACT_MIN_BYTES = 64 * 1024;

/** Where spools live by default: the OS's state directory for this user. */
export function defaultSpoolRoot(
  env: Record<string, string | undefined> = process.env,
  platform: NodeJS.Platform = process.platform,
  home: string = homedir(),
): string {
  const base =
    platform === "win32"
      ? (env.LOCALAPPDATA ?? join(home, "AppData", "Local"))
      : platform === "darwin"
        ? join(home, "Library", "Application Support")
        : (env.XDG_STATE_HOME ?? join(home, ".local", "state"));
  return join(base, "countersign-mcp-gateway", "spool");
}

/**
 * The directory of one gateway's spool: its name (`--name`, or the upstream's fingerprint when
 * none is given) and a fingerprint of the Countersign address and agent key the reports go to.
 */
export function spoolDirectory(
  root: string,
  gateway: string,
  countersignUrl: string,
  agentKey: string,
): string {
  const name = gateway.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, 64) || "gateway";
  const key = createHash("sha256").update(`${countersignUrl}\n${agentKey}`).digest("hex");
  return join(root, `${name}-${key.slice(0, 16)}`);
}

type Line = { r?: unknown; o?: unknown; d?: unknown };

export class OutcomeSpool {
  private fd: number | null = null;
  private file: string;
  /** live reports by call id: their line in the file */
  private readonly live = new Map<string, string>();
  private liveBytes = 0;
  private fileBytes = 0;
  private syncing = false;
  private syncAgain = false;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private recovered = false;
  private warnedFull = false;
  private broken = false;

  constructor(
    readonly dir: string,
    private readonly warn: (line: string) => void,
  ) {
    this.file = ownFileName(dir);
  }

  /**
   * Claims the files of gateways that are gone and returns their live reports, now kept in this
   * process's file. Once per spool: later calls return nothing.
   */
  recover(): SpooledReport[] {
    if (this.recovered) return [];
    this.recovered = true;
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return []; // no spool yet
    }
    try {
      checkPrivate(this.dir);
    } catch (error) {
      this.fail(error);
      return [];
    }
    const found: SpooledReport[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      if (path === this.file || !/^\d+-[0-9a-f]+\.(jsonl|claim)$/.test(name)) continue;
      if (!ownRegularFile(path) || ownerAlive(name, path)) continue;
      const claimed = join(this.dir, `${process.pid}-${randomBytes(4).toString("hex")}.claim`);
      try {
        renameSync(path, claimed); // atomic: another starting gateway took it if this fails
      } catch {
        continue;
      }
      const reports = this.parse(readNoFollow(claimed), name);
      const fresh = reports.filter((report) => !this.live.has(report.outcome.callId));
      // All are sent from memory; the claimed file goes only once all are in this one's (else it
      // stays, and a restart sends them again: harmless).
      found.push(...fresh);
      if (this.append(fresh) !== fresh.length) continue;
      if (this.fd !== null) fsyncSync(this.fd);
      unlinkSync(claimed);
    }
    return found;
  }

  /** Appends reports (one write); returns how many were spooled (the rest: over the bound). */
  append(reports: SpooledReport[]): number {
    if (reports.length === 0 || this.broken) return 0;
    let text = "";
    let count = 0;
    for (const report of reports) {
      const line = `${JSON.stringify({ r: report.runId, o: report.outcome })}\n`;
      const bytes = Buffer.byteLength(line);
      if (this.liveBytes + bytes > MAX_LIVE_BYTES) {
        if (!this.warnedFull)
          this.warn(
            `the outcome spool ${this.dir} is full (${MAX_LIVE_BYTES} bytes unsent): later reports are kept in memory only`,
          );
        this.warnedFull = true;
        continue;
      }
      if (this.live.has(report.outcome.callId)) continue;
      this.live.set(report.outcome.callId, line);
      this.liveBytes += bytes;
      text += line;
      count++;
    }
    if (text && !this.write(text)) return 0;
    this.syncSoon();
    return count;
  }

  /** Marks reports done (accepted, or refused for good): they are not sent again. */
  done(callIds: string[]): void {
    const ended = callIds.filter((id) => this.live.has(id));
    if (ended.length === 0 || this.fd === null) return;
    for (const id of ended) {
      this.liveBytes -= Buffer.byteLength(this.live.get(id)!);
      this.live.delete(id);
    }
    try {
      if (this.live.size === 0) {
        ftruncateSync(this.fd, 0);
        this.fileBytes = 0;
      } else if (this.fileBytes > COMPACT_MIN_BYTES && this.fileBytes > 4 * this.liveBytes) {
        this.compact();
      } else {
        this.write(`${JSON.stringify({ d: ended })}\n`);
      }
    } catch (error) {
      this.fail(error); // the worst case is a report sent again: harmless
    }
  }

  /** Closes the file: removed when nothing is left to send, kept for the next start otherwise. */
  close(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
    if (this.fd === null) return;
    try {
      if (this.live.size > 0) fsyncSync(this.fd);
      closeSync(this.fd);
      if (this.live.size === 0) {
        unlinkSync(this.file);
        rmdirSync(this.dir); // left only when another gateway's file is in it (then it throws)
      }
    } catch {
      // nothing more to do: what was written stays for the next start
    }
    this.fd = null;
  }

  private write(text: string): boolean {
    try {
      if (this.fd === null) this.openFile();
      else if (fstatSync(this.fd).nlink === 0) this.reopen(); // taken while this one was paused
      writeSync(this.fd!, text);
      this.fileBytes += Buffer.byteLength(text);
      return true;
    } catch (error) {
      this.fail(error);
      return false;
    }
  }

  private openFile() {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    checkPrivate(this.dir);
    this.fd = openSync(this.file, CREATE_NEW, 0o600);
    this.fileBytes = 0;
    // A live process keeps its file fresh, so a reused pid cannot keep it from recovery forever.
    this.heartbeat ??= setInterval(() => {
      try {
        if (this.fd === null) return;
        if (fstatSync(this.fd).nlink === 0) this.reopen();
        else futimesSync(this.fd, new Date(), new Date());
      } catch (error) {
        this.fail(error);
      }
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Another gateway took this file (it looked abandoned): the live reports go to a new one. */
  private reopen() {
    closeSync(this.fd!);
    this.file = ownFileName(this.dir);
    this.openFile();
    const text = [...this.live.values()].join("");
    writeSync(this.fd!, text);
    this.fileBytes = Buffer.byteLength(text);
  }

  /** Rewrites the file with the live reports only: a temporary file, fsync, rename. */
  private compact() {
    const text = [...this.live.values()].join("");
    const temporary = `${this.file}.${randomBytes(4).toString("hex")}.tmp`;
    const fd = openSync(temporary, CREATE_NEW, 0o600);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, this.file);
    closeSync(this.fd!);
    this.fd = openSync(this.file, APPEND_EXISTING);
    this.fileBytes = Buffer.byteLength(text);
  }

  /**
   * One fsync for the writes of the next SYNC_DELAY_MS (and any made while it runs), skipped when
   * by then nothing is live: a busy session's reports ride along with its next call and are done
   * within milliseconds, so they cost the disk nothing beyond the write.
   */
  private syncSoon() {
    if (this.syncing) {
      this.syncAgain = true;
      return;
    }
    this.syncing = true;
    setTimeout(() => {
      const fd = this.fd;
      if (fd === null || this.live.size === 0) {
        this.syncing = false;
        this.syncAgain = false;
        return;
      }
      fsync(fd, () => {
        this.syncing = false;
        if (this.syncAgain) {
          this.syncAgain = false;
          this.syncSoon();
        }
      });
    }, SYNC_DELAY_MS).unref();
  }

  /** The live reports of a spool file's text; lines that do not parse are skipped, with a warning. */
  private parse(text: string, name: string): SpooledReport[] {
    const reports = new Map<string, SpooledReport>();
    let skipped = 0;
    for (const raw of text.split("\n")) {
      if (!raw.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        skipped++;
        continue;
      }
      if (Array.isArray(line.d)) {
        for (const id of line.d) if (typeof id === "string") reports.delete(id);
        continue;
      }
      const outcome = line.o as Outcome | undefined;
      if (
        typeof line.r !== "string" ||
        typeof outcome !== "object" ||
        outcome === null ||
        typeof outcome.callId !== "string" ||
        (outcome.type !== "tool.completed" && outcome.type !== "tool.failed")
      ) {
        skipped++;
        continue;
      }
      reports.set(outcome.callId, { runId: line.r, outcome });
    }
    if (skipped > 0)
      this.warn(`skipped ${skipped} unreadable line(s) of the outcome spool file ${name}`);
    return [...reports.values()];
  }

  private fail(error: unknown) {
    if (!this.broken)
      this.warn(
        `the outcome spool ${this.dir} cannot be written (${error instanceof Error ? error.message : String(error)}): reports are kept in memory only`,
      );
    this.broken = true;
  }
}

const NO_FOLLOW = constants.O_NOFOLLOW ?? 0; // not on Windows
/** a file of our own making: never one planted (or linked) there before */
const CREATE_NEW =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | NO_FOLLOW;
const APPEND_EXISTING = constants.O_WRONLY | constants.O_APPEND | NO_FOLLOW;

const ownFileName = (dir: string) =>
  join(dir, `${process.pid}-${randomBytes(4).toString("hex")}.jsonl`);

/** Refuses a spool folder that is a link, another user's, or open to others (POSIX). */
function checkPrivate(dir: string): void {
  const stat = lstatSync(dir);
  if (!stat.isDirectory()) throw new Error(`${dir} is not a directory`);
  if (process.platform === "win32") return;
  if (stat.uid !== process.getuid!()) throw new Error(`${dir} belongs to another user`);
  if ((stat.mode & 0o077) !== 0)
    throw new Error(
      `${dir} is open to other users (mode ${(stat.mode & 0o777).toString(8)}): chmod 700 it`,
    );
}

/** A regular file of this user's (not a link, a FIFO or another user's file). */
function ownRegularFile(path: string): boolean {
  try {
    const stat = lstatSync(path);
    return stat.isFile() && (process.platform === "win32" || stat.uid === process.getuid!());
  } catch {
    return false;
  }
}

function readNoFollow(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | NO_FOLLOW | (constants.O_NONBLOCK ?? 0));
  try {
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** Whether the process that wrote a spool file may still be using it. */
function ownerAlive(name: string, path: string): boolean {
  const pid = Number(name.slice(0, name.indexOf("-")));
  // Our pid on a file that is not ours: an earlier process that had it (containers reuse pids).
  if (pid === process.pid) return false;
  try {
    if (Date.now() - statSync(path).mtimeMs > STALE_MS) return false;
  } catch {
    return true; // gone meanwhile: another gateway took it
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** One spool per directory in a process (an HTTP gateway's sessions share it). */
const spools = new Map<string, OutcomeSpool>();

export function spoolAt(dir: string, warn: (line: string) => void): OutcomeSpool {
  let spool = spools.get(dir);
  if (!spool) spools.set(dir, (spool = new OutcomeSpool(dir, warn)));
  return spool;
}
