import { Countersign } from "@countersign/sdk";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OutcomeReports, type Outcome } from "@/lib/mcp-gateway/outcome-reports";
import {
  defaultSpoolRoot,
  MAX_LIVE_BYTES,
  OutcomeSpool,
  spoolDirectory,
} from "@/lib/mcp-gateway/spool";

// The outcome reports' spool (issue 25: reports queued in a gateway that is killed are not lost).
// A spool file written by one OutcomeSpool and read by another stands for a gateway killed and
// started again (test/mcp-gateway/restart.test.ts does it with real processes and SIGKILL).

const outcome = (callId: string, text = "ok"): Outcome => ({
  callId,
  type: "tool.completed",
  result: { isError: false, text },
});

function spoolIn(dir = mkdtempSync(join(tmpdir(), "countersign-spool-"))) {
  const warnings: string[] = [];
  return { dir, warnings, spool: new OutcomeSpool(dir, (line) => warnings.push(line)) };
}

/** the spool's files (none once its folder is removed: a clean exit with nothing left) */
const files = (dir: string) =>
  existsSync(dir) ? readdirSync(dir).filter((name) => !name.endsWith(".tmp")) : [];

describe("OutcomeSpool", () => {
  it("keeps what was appended for the next process, which sends it to its own run", async () => {
    const { dir, spool } = spoolIn();
    expect(spool.append([{ runId: "run-1", outcome: outcome("a") }])).toBe(1);
    spool.append([{ runId: "run-1", outcome: outcome("b") }]);
    spool.done(["a"]);
    // killed here: no close. The next gateway of this name and key finds b, not a.
    const next = spoolIn(dir);
    expect(next.spool.recover()).toEqual([{ runId: "run-1", outcome: outcome("b") }]);
    expect(next.spool.recover()).toEqual([]); // once
    // now in the new process's own file, the claimed one gone
    const [own] = files(dir);
    expect(files(dir)).toHaveLength(1);
    expect(readFileSync(join(dir, own!), "utf8")).toBe(
      `${JSON.stringify({ r: "run-1", o: outcome("b") })}\n`,
    );
  });

  it("removes its file on close when everything was sent, keeps it when not", () => {
    const { dir, spool } = spoolIn();
    spool.append([{ runId: "run-1", outcome: outcome("a") }]);
    spool.done(["a"]);
    expect(readFileSync(join(dir, files(dir)[0]!), "utf8")).toBe(""); // truncated
    spool.close();
    expect(files(dir)).toEqual([]);

    const second = spoolIn(dir);
    second.spool.append([{ runId: "run-2", outcome: outcome("c") }]);
    second.spool.close();
    expect(spoolIn(dir).spool.recover()).toEqual([{ runId: "run-2", outcome: outcome("c") }]);
  });

  it("skips a line it cannot read (a torn write) with a warning, and reads the rest", () => {
    const { dir } = spoolIn();
    writeFileSync(
      join(dir, "999999999-0badf00d.jsonl"),
      [
        JSON.stringify({ r: "run-1", o: outcome("a") }),
        "{not json",
        JSON.stringify({ r: "run-1", o: { callId: "x", type: "nonsense" } }),
        JSON.stringify({ r: "run-1", o: outcome("b") }),
        JSON.stringify({ d: ["a"] }),
        '{"r":"run-1","o":{"callId":"c","ty', // the last write, cut by the kill
      ].join("\n"),
    );
    const next = spoolIn(dir);
    expect(next.spool.recover()).toEqual([{ runId: "run-1", outcome: outcome("b") }]);
    expect(next.warnings).toEqual([expect.stringMatching(/skipped 3 unreadable line/)]);
  });

  it("leaves the file of a gateway still running alone, unless it was not refreshed for minutes", () => {
    const { dir } = spoolIn();
    const alive = join(dir, `${process.ppid}-00000001.jsonl`);
    writeFileSync(alive, `${JSON.stringify({ r: "run-1", o: outcome("a") })}\n`);
    expect(spoolIn(dir).spool.recover()).toEqual([]);
    expect(existsSync(alive)).toBe(true);
    // a live process refreshes its file every minute: an old one belongs to a reused pid
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(alive, old, old);
    expect(spoolIn(dir).spool.recover()).toHaveLength(1);
  });

  it("is bounded: reports past its size are kept in memory only, with one warning", () => {
    const { spool, warnings } = spoolIn();
    const big = "x".repeat(30_000);
    const many = Array.from({ length: 200 }, (_, i) => ({
      runId: "run-1",
      outcome: outcome(`c${i}`, big),
    }));
    const kept = spool.append(many);
    expect(kept).toBeLessThan(200);
    expect(kept * 30_000).toBeLessThanOrEqual(MAX_LIVE_BYTES);
    expect(spool.append([{ runId: "run-1", outcome: outcome("one-more", big) }])).toBe(0);
    expect(warnings).toEqual([expect.stringMatching(/full/)]);
  });

  it("rewrites its file without the done lines once they outweigh the live ones", () => {
    const { dir, spool } = spoolIn();
    spool.append([{ runId: "run-1", outcome: outcome("keep") }]);
    for (let i = 0; i < 60; i++) {
      spool.append([{ runId: "run-1", outcome: outcome(`c${i}`, "y".repeat(2_000)) }]);
      spool.done([`c${i}`]);
    }
    const file = join(dir, files(dir)[0]!);
    expect(readFileSync(file, "utf8").length).toBeLessThan(64 * 1024 + 4_000);
    expect(
      spoolIn(dir)
        .spool.recover()
        .map((r) => r.outcome.callId),
    ).toEqual(["keep"]);
  });

  it("refuses a folder other users can write or own: what they planted is never sent", () => {
    const { dir } = spoolIn();
    const planted = join(dir, "999999999-deadbeef.jsonl");
    writeFileSync(planted, `${JSON.stringify({ r: "run-x", o: outcome("forged") })}\n`);
    chmodSync(dir, 0o777);
    const next = spoolIn(dir);
    expect(next.spool.recover()).toEqual([]);
    expect(next.warnings).toEqual([expect.stringMatching(/open to other users/)]);
    expect(next.spool.append([{ runId: "run-1", outcome: outcome("a") }])).toBe(0); // memory only
    expect(existsSync(planted)).toBe(true);
    if (process.getuid?.() === 0) {
      chmodSync(dir, 0o700);
      chownSync(dir, 65534, 65534);
      const again = spoolIn(dir);
      expect(again.spool.recover()).toEqual([]);
      expect(again.warnings).toEqual([expect.stringMatching(/belongs to another user/)]);
    }
  });

  it("follows no link and opens no FIFO left in its folder", () => {
    const { dir } = spoolIn();
    const elsewhere = join(mkdtempSync(join(tmpdir(), "countersign-elsewhere-")), "victim");
    writeFileSync(elsewhere, `${JSON.stringify({ r: "run-x", o: outcome("linked") })}\n`);
    symlinkSync(elsewhere, join(dir, "999999999-0000aaaa.jsonl"));
    execFileSync("mkfifo", [join(dir, "999999999-0000bbbb.jsonl")]);
    const next = spoolIn(dir);
    expect(next.spool.recover()).toEqual([]); // and it did not hang on the FIFO
    expect(readFileSync(elsewhere, "utf8")).toContain("linked");
  });

  it("a process whose file was taken while it was paused writes its live reports anew", () => {
    const { dir, spool } = spoolIn();
    spool.append([{ runId: "run-1", outcome: outcome("a") }]);
    // Another gateway took the file as abandoned (here: the same pid, which recovery treats so).
    expect(
      spoolIn(dir)
        .spool.recover()
        .map((r) => r.outcome.callId),
    ).toEqual(["a"]);
    spool.append([{ runId: "run-1", outcome: outcome("b") }]);
    const all = spoolIn(dir)
      .spool.recover()
      .map((r) => r.outcome.callId);
    expect(all.sort()).toEqual(["a", "b"]);
  });

  it("sends every report of a claimed file, also those past its own bound, and keeps the claim", () => {
    const { dir } = spoolIn();
    const big = "x".repeat(30_000);
    writeFileSync(
      join(dir, "999999999-0000cccc.jsonl"),
      Array.from(
        { length: 200 },
        (_, i) => `${JSON.stringify({ r: "run-1", o: outcome(`c${i}`, big) })}\n`,
      ).join(""),
    );
    const next = spoolIn(dir);
    expect(next.spool.recover()).toHaveLength(200);
    expect(files(dir).some((name) => name.endsWith(".claim"))).toBe(true);
  });

  it("lives under the OS's state directory, one folder per gateway name and key", () => {
    expect(defaultSpoolRoot({ XDG_STATE_HOME: "/s" }, "linux", "/home/me")).toBe(
      "/s/countersign-mcp-gateway/spool",
    );
    expect(defaultSpoolRoot({}, "linux", "/home/me")).toBe(
      "/home/me/.local/state/countersign-mcp-gateway/spool",
    );
    expect(defaultSpoolRoot({}, "darwin", "/Users/me")).toBe(
      "/Users/me/Library/Application Support/countersign-mcp-gateway/spool",
    );
    const a = spoolDirectory("/r", "file system", "https://cs.example", "cs_agent_a");
    expect(a).toMatch(/^\/r\/file_system-[0-9a-f]{16}$/);
    expect(a).not.toContain("cs_agent_a");
    expect(spoolDirectory("/r", "file system", "https://cs.example", "cs_agent_b")).not.toBe(a);
  });
});

describe("OutcomeReports with a spool", () => {
  function harness(dir: string, answers: number[]) {
    const sent: { path: string; callIds: string[] }[] = [];
    const client = new Countersign({
      baseUrl: "http://countersign.test",
      apiKey: "cs_agent_test",
      retry: false,
      fetch: async (input, init) => {
        const body = JSON.parse(String(init?.body)) as { outcomes: Outcome[] };
        sent.push({ path: new URL(input).pathname, callIds: body.outcomes.map((o) => o.callId) });
        const status = answers.shift() ?? 201;
        if (status === 0) throw new TypeError("fetch failed");
        return new Response(JSON.stringify({ recorded: [], alreadyReported: [] }), {
          status,
          headers: { "content-type": "application/json" },
        });
      },
    });
    const spool = new OutcomeSpool(dir, () => {});
    const reports = new OutcomeReports(
      client,
      async () => "run-now",
      () => {},
      spool,
    );
    return { reports, spool, sent };
  }

  it("writes a report before it is queued and forgets it once Countersign took it; what could not be sent goes next time, to its run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "countersign-spool-"));
    const first = harness(dir, [503, 503, 503, 503, 503, 503]);
    first.reports.add(outcome("a"), "run-1");
    expect(readFileSync(join(dir, files(dir)[0]!), "utf8")).toContain('"callId":"a"');
    expect(await first.reports.flush(300)).toBe(1); // Countersign down: still queued
    first.spool.close();

    const second = harness(dir, []);
    second.reports.adopt(second.spool.recover());
    expect(await second.reports.flush(2_000)).toBe(0);
    expect(second.sent).toEqual([
      { path: "/api/v1/runs/run-1/gated-calls/outcomes", callIds: ["a"] },
    ]);
    second.spool.close();
    expect(files(dir)).toEqual([]);
  });
});
