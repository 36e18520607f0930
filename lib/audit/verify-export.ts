import { readFileSync } from "node:fs";
import { createHash, verify } from "node:crypto";
import { contentBytes, GENESIS_HASH, linkHash } from "@/lib/events/event-chain";
import { AUDIT_EXPORT_COLUMNS, type AuditExportRow } from "./export-audit";
import {
  CSV_HEAD_MARK,
  csvHeadLine,
  JSON_HEAD_MARK,
  jsonHeadField,
  signedMessage,
  type SignedHead,
} from "./signed-export";
import { keyIdOf, publicKeyFromBase64 } from "./signing-key";

// `npm run admin -- audit verify-export FILE [--public-key KEY]`: checks a history or audit export
// (lib/audit/signed-export.ts) without the database. The signature must cover the file's bytes
// and its chain head; in an audit export every row's hash must also follow from its content and
// the previous row's hash, rows next to each other in the log must link up, and a row at the
// head must carry the head's hash. The signature is checked with the key the file names unless
// --public-key pins the server's (GET /api/v1/audit/public-key): only a pinned key shows that the
// server, and not whoever wrote the file, signed it.

export type ExportVerdict = { ok: boolean; message: string };

const fail = (message: string): ExportVerdict => ({ ok: false, message });

export function verifyExportFile(path: string, pinnedKey?: string): ExportVerdict {
  return verifyExport(readFileSync(path), pinnedKey);
}

export function verifyExport(file: Buffer, pinnedKey?: string): ExportVerdict {
  const split = splitHead(file);
  if (!split)
    return fail(
      "The file has no signed chain head: it is not a Countersign export, or its end was cut off.",
    );
  const { body, head, kind, rows } = split;
  if (
    pinnedKey !== undefined &&
    publicKeyFromBase64(pinnedKey).equals(publicKeyFromBase64(head.publicKey)) === false
  )
    return fail(
      `The file is signed with key ${keyIdOf(Buffer.from(head.publicKey, "base64"))}, not with the key given.`,
    );
  const bodySha256 = createSha256(body);
  const signatureHolds = safeVerify(head, kind);
  if (!signatureHolds)
    return fail(
      "The signature does not match the file's chain head: the head was changed, or another key signed it.",
    );
  if (bodySha256 !== head.bodySha256)
    return fail(
      "The file was changed after it was signed: its bytes do not match the signed digest.",
    );
  const rowProblem = rows ? checkRows(rows(), head) : null;
  if (rowProblem) return fail(rowProblem);
  const keyId = keyIdOf(Buffer.from(head.publicKey, "base64"));
  return {
    ok: true,
    message: [
      `The ${kind} export verifies: signed ${head.signedAt} at chain head seq ${head.seq}, hash ${head.hash}, by key ${keyId}${pinnedKey ? " (the key given)" : ""}.`,
      ...(pinnedKey
        ? []
        : [
            "Pass --public-key with the server's key (GET /api/v1/audit/public-key) to be sure who signed it.",
          ]),
    ].join("\n"),
  };
}

const createSha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

function safeVerify(head: SignedHead, kind: string): boolean {
  try {
    return verify(
      null,
      Buffer.from(signedMessage(kind, head), "utf8"),
      publicKeyFromBase64(head.publicKey),
      Buffer.from(head.signature, "base64"),
    );
  } catch {
    return false;
  }
}

type Split = {
  body: Buffer;
  head: SignedHead;
  kind: "history" | "audit";
  rows: (() => AuditExportRow[]) | null;
};

function splitHead(file: Buffer): Split | null {
  const text = file.toString("utf8");
  if (text.trimStart().startsWith("{")) {
    const at = file.lastIndexOf(JSON_HEAD_MARK);
    if (at < 0) return null;
    const body = file.subarray(0, at);
    // Everything is read from the signed bytes: the head field must be the file's very end, and
    // the rows come from the body alone. (Reading them from the whole file let a forger append
    // a second "events" after the head, which JSON.parse prefers: found by review.)
    const tail = file.subarray(at).toString("utf8");
    let head: SignedHead;
    let parsed: { events?: AuditExportRow[]; batches?: unknown[] };
    try {
      head = JSON.parse(tail.slice(JSON_HEAD_MARK.length).trimEnd().slice(0, -1)) as SignedHead;
      parsed = JSON.parse(`${body.toString("utf8")}}`);
    } catch {
      return null;
    }
    if (tail !== jsonHeadField(head)) return null;
    const events = parsed.events;
    if (!events && !Array.isArray(parsed.batches)) return null;
    return {
      body,
      head,
      kind: events ? "audit" : "history",
      rows: events ? () => events : null,
    };
  }
  const marker = Buffer.from(`\r\n${CSV_HEAD_MARK},`);
  const at = file.lastIndexOf(marker);
  if (at < 0) return null;
  const body = file.subarray(0, at + 2);
  const fields = file
    .subarray(at + marker.length)
    .toString("utf8")
    .trim()
    .split(",");
  if (fields.length !== 6) return null;
  const [seq, hash, signedAt, bodySha256, publicKey, signature] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  const head: SignedHead = { seq: Number(seq), hash, signedAt, bodySha256, publicKey, signature };
  // nothing may follow the signed head line
  if (file.subarray(at + 2).toString("utf8") !== csvHeadLine(head)) return null;
  const header = text.slice(0, text.indexOf("\r\n"));
  const audit = header === AUDIT_EXPORT_COLUMNS.join(",");
  return {
    body,
    head,
    kind: audit ? "audit" : "history",
    rows: audit ? () => parseAuditCsv(body.toString("utf8")) : null,
  };
}

/** Each row's hash from its content and previous hash; neighbours linked; the head's row. */
function checkRows(rows: AuditExportRow[], head: SignedHead): string | null {
  let previous: AuditExportRow | null = null;
  for (const row of rows) {
    const content = contentBytes([
      row.seq,
      row.type,
      row.at,
      row.runId,
      row.batchId,
      row.callId,
      row.queueId,
      row.actorKind,
      row.actorId,
      row.actorName,
      row.data,
    ]);
    if (row.hash !== linkHash(row.prevHash ?? GENESIS_HASH, content))
      return `Row seq ${row.seq} does not match its hash: its content or hash was changed.`;
    if (previous && previous.seq === row.seq - 1 && previous.hash !== row.prevHash)
      return `Row seq ${row.seq} does not follow row seq ${previous.seq}: a previous hash was changed.`;
    if (previous && row.seq <= previous.seq)
      return `Row seq ${row.seq} comes after seq ${previous.seq}: rows were reordered or repeated.`;
    if (row.seq === head.seq && row.hash !== head.hash)
      return `Row seq ${row.seq} is the signed head but does not carry its hash.`;
    if (row.seq > head.seq) return `Row seq ${row.seq} is after the signed head (seq ${head.seq}).`;
    previous = row;
  }
  return null;
}

/** The rows of an audit CSV (RFC 4180; an empty cell is NULL, one added leading quote removed). */
export function parseAuditCsv(text: string): AuditExportRow[] {
  const records = parseCsv(text);
  const [header, ...lines] = records;
  if (!header) return [];
  return lines.map((cells) => {
    const value = (column: (typeof AUDIT_EXPORT_COLUMNS)[number]) => {
      const cell = cells[header.indexOf(column as never)] ?? null;
      if (cell === null) return null;
      return cell.startsWith("'") ? cell.slice(1) : cell;
    };
    return {
      seq: Number(value("seq")),
      time: value("time") ?? "",
      at: Number(value("at")),
      type: value("type") ?? "",
      runId: value("runId"),
      batchId: value("batchId"),
      callId: value("callId"),
      queueId: value("queueId"),
      actorKind: value("actorKind") ?? "",
      actorId: value("actorId"),
      actorName: value("actorName"),
      data: value("data") ?? "",
      prevHash: value("prevHash") ?? GENESIS_HASH,
      hash: value("hash"),
    };
  });
}

/** RFC 4180 records; an empty cell that was not quoted is null. */
function parseCsv(text: string): (string | null)[][] {
  const records: (string | null)[][] = [];
  let cells: (string | null)[] = [];
  let cell = "";
  let quoted = false;
  let wasQuoted = false;
  const push = () => {
    cells.push(cell === "" && !wasQuoted ? null : cell);
    cell = "";
    wasQuoted = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = wasQuoted = true;
    else if (c === ",") push();
    else if (c === "\r" && text[i + 1] === "\n") {
      push();
      records.push(cells);
      cells = [];
      i++;
    } else cell += c;
  }
  if (cell !== "" || cells.length > 0) {
    push();
    records.push(cells);
  }
  return records;
}
