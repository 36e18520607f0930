import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createHash, generateKeyPairSync, sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeDb, getClient, getDb } from "@/db/client";
import { decideCall } from "@/lib/approvals/decide-call";
import { exportAudit } from "@/lib/audit/export-audit";
import { csvHeadLine, signedMessage } from "@/lib/audit/signed-export";
import { auditPublicKey } from "@/lib/audit/signing-key";
import { verifyExport } from "@/lib/audit/verify-export";
import { authenticate, type AgentActor, type ReviewerActor } from "@/lib/auth/actor";
import { createAgentKey } from "@/lib/agents/create-agent-key";
import { exportHistory } from "@/lib/history/export-history";
import { OPERATOR } from "@/lib/queues/queue-access";
import { createRun } from "@/lib/runs/create-run";
import { runAdminCli } from "../support/admin-cli";
import { freshDatabase } from "../support/database";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";

// History and audit exports end with the event log's chain head signed by the server's Ed25519
// key (lib/audit/signed-export.ts); `audit verify-export` checks a file without the database.

let databaseUrl: string;
let dir: string;
let agent: AgentActor;
let dana: ReviewerActor;
let queueId: string;

const as = (token: string) =>
  authenticate(getDb(), new Headers({ authorization: `Bearer ${token}` }));

beforeAll(async () => {
  databaseUrl = await freshDatabase("signed-exports");
  dir = mkdtempSync(join(tmpdir(), "countersign-exports-"));
  const queue = await makeQueue({});
  queueId = queue.id;
  const reviewer = await makeReviewer({ name: "Dana Reviewer", queues: [{ name: queue.name }] });
  agent = (await as((await makeAgentKey({ queues: [queue.name] })).key)) as AgentActor;
  dana = (await as(reviewer.token)) as ReviewerActor;
  // Trust events for the audit export, with text a spreadsheet would run and a quote.
  for (const name of ["=HYPERLINK(1)", "'quoted", 'Comma, "and" quote']) {
    await createAgentKey(OPERATOR, { name, defaultQueue: queueId });
  }
  for (let i = 0; i < 3; i++) {
    const { run } = await createRun(agent, {
      batch: { calls: [{ toolCallId: `t${i}`, toolName: "refund_order", args: { i } }] },
    });
    const call = run.batches![0]!.calls[0]!;
    await decideCall(dana, call.id, {
      outcome: i === 1 ? "reject" : "approve",
      expectedRevision: call.revision,
      reason: i === 1 ? '-not this one, "really"\nno' : undefined,
    });
  }
});

afterAll(() => {
  closeDb();
  rmSync(dirname(databaseUrl.slice("file:".length)), { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

async function download(kind: "history" | "audit", format: "csv" | "json"): Promise<Buffer> {
  const file =
    kind === "history"
      ? await exportHistory(dana, { format })
      : await exportAudit(OPERATOR, { format });
  return Buffer.from(await new Response(file.body).arrayBuffer());
}

function saved(name: string, bytes: Buffer | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const FILES = [
  ["history", "csv"],
  ["history", "json"],
  ["audit", "csv"],
  ["audit", "json"],
] as const;

describe("a signed export", () => {
  it.each(FILES)(
    "%s %s verifies with the CLI, and with the server's public key pinned",
    async (kind, format) => {
      const file = await download(kind, format);
      const path = saved(`${kind}.${format}`, file);
      const { publicKey } = await auditPublicKey(dana);
      const answer = await runAdminCli(
        databaseUrl,
        "audit",
        "verify-export",
        path,
        "--public-key",
        publicKey,
      );
      expect(answer.stderr).toBe("");
      expect(answer.code).toBe(0);
      expect(answer.stdout).toContain(`The ${kind} export verifies`);
      // without the server's key the file may hold together, but who signed it is not checked
      const unpinned = await runAdminCli(databaseUrl, "audit", "verify-export", path);
      expect(unpinned.code).toBe(2);
      expect(unpinned.stderr).toContain("Pass --public-key");
      expect(verifyExport(file, publicKey)).toMatchObject({ ok: true });
      const stranger = generateKeyPairSync("ed25519")
        .publicKey.export({ format: "der", type: "spki" })
        .subarray(-32)
        .toString("base64");
      expect(verifyExport(file, stranger)).toMatchObject({ ok: false });
    },
  );

  it("carries each audit row's content and hash as the log stores them, up to the signed head", async () => {
    const { events, chainHead } = JSON.parse((await download("audit", "json")).toString("utf8"));
    expect(events.length).toBeGreaterThanOrEqual(3);
    const stored = await getClient().execute("select seq, hash from events");
    const hashes = new Map(stored.rows.map((r) => [Number(r[0]), String(r[1])]));
    for (const row of events) expect(row.hash).toBe(hashes.get(row.seq));
    expect(chainHead.hash).toBe(hashes.get(chainHead.seq));
    expect(chainHead.seq).toBe(Math.max(...hashes.keys()));
  });

  it("names in a history row the place of the call's last event", async () => {
    const { batches } = JSON.parse((await download("history", "json")).toString("utf8"));
    for (const batch of batches) {
      const [last] = (
        await getClient().execute({
          sql: "select seq, hash from events where batch_id = ? order by seq desc limit 1",
          args: [batch.id],
        })
      ).rows;
      expect(batch.chain).toEqual({ seq: Number(last![0]), hash: last![1] });
    }
  });
});

describe("a tampered export", () => {
  const tamperings: [string, (text: string) => string][] = [
    ["a changed reason", (t) => t.replace("not this one", "fine, this one")],
    ["a removed row", (t) => t.replace(/\r\n[^\r\n]*refund_order[^\r\n]*\r\n/, "\r\n")],
    [
      "a changed head",
      (t) => t.replace(/#chain-head,(\d+)/, (_, n) => `#chain-head,${Number(n) + 1}`),
    ],
    ["its head cut off", (t) => t.slice(0, t.lastIndexOf("#chain-head"))],
  ];

  it.each(tamperings)("fails verify-export: history CSV with %s", async (_, tamper) => {
    const text = (await download("history", "csv")).toString("utf8");
    const changed = tamper(text);
    expect(changed).not.toBe(text);
    const answer = await runAdminCli(
      databaseUrl,
      "audit",
      "verify-export",
      saved("t.csv", changed),
    );
    expect(answer.code).toBe(1);
  });

  it("fails when rows are added after the signed head (found by review: JSON.parse kept the last copy)", async () => {
    const { publicKey } = await auditPublicKey(dana);
    const forge = (file: Buffer, extra: string) => {
      const text = file.toString("utf8").trimEnd();
      return Buffer.from(`${text.slice(0, -1)},${extra}}\n`);
    };
    const audit = await download("audit", "json");
    const forgedRow = { ...JSON.parse(audit.toString("utf8")).events[0], actorName: "Mallory" };
    expect(
      verifyExport(forge(audit, `"events":[${JSON.stringify(forgedRow)}]`), publicKey),
    ).toMatchObject({ ok: false });
    const history = await download("history", "json");
    expect(verifyExport(forge(history, `"batches":[]`), publicKey)).toMatchObject({ ok: false });
    const csv = await download("audit", "csv");
    expect(
      verifyExport(Buffer.concat([csv, Buffer.from("1,forged\r\n")]), publicKey),
    ).toMatchObject({ ok: false });
    expect(verifyExport(audit, publicKey)).toMatchObject({ ok: true });
  });

  it("fails when an audit row's content is changed (JSON and CSV)", async () => {
    const file = JSON.parse((await download("audit", "json")).toString("utf8"));
    file.events[1].actorName = "Mallory";
    expect(verifyExport(Buffer.from(JSON.stringify(file))).ok).toBe(false);
    const csv = (await download("audit", "csv")).toString("utf8");
    const edited = csv.replace("=HYPERLINK(1)", "=HYPERLINK(2)");
    expect(edited).not.toBe(csv);
    expect(verifyExport(Buffer.from(edited)).ok).toBe(false);
  });

  it("re-signed by someone else: fails against the server's key, and an edited row fails its hash", async () => {
    const { publicKey: serverKey } = await auditPublicKey(dana);
    const text = (await download("audit", "csv")).toString("utf8");
    const lines = text.split("\r\n");
    const row = lines.findIndex((l) => l.includes("agent.created"));
    expect(row).toBeGreaterThan(0);
    const resign = (rows: string[]) => {
      const at = rows.findIndex((l) => l.startsWith("#chain-head,"));
      const body = `${rows.slice(0, at).join("\r\n")}\r\n`;
      const [, seq, hash] = rows[at]!.split(",");
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      const head = {
        seq: Number(seq),
        hash: hash!,
        signedAt: new Date().toISOString(),
        bodySha256: createHash("sha256").update(body).digest("hex"),
      };
      const signature = sign(null, Buffer.from(signedMessage("audit", head)), privateKey);
      const raw = publicKey.export({ format: "der", type: "spki" }).subarray(-32);
      return Buffer.from(
        `${body}${csvHeadLine({ ...head, publicKey: raw.toString("base64"), signature: signature.toString("base64") })}`,
      );
    };
    const untouched = resign(lines);
    expect(verifyExport(untouched).ok).toBe(true); // the file is consistent…
    expect(verifyExport(untouched, serverKey).ok).toBe(false); // …but not signed by the server
    lines[row] = lines[row]!.replace("agent.created", "agent.creeted");
    const edited = resign(lines);
    expect(verifyExport(edited)).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Row seq \d+ does not match its hash/),
    });
  });
});
