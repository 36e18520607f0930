import { z } from "zod";
import { getClient, getDb } from "@/db/client";
import { parseInput } from "@/lib/input/parse";
import { isoTime } from "@/lib/ids";
import { managerOf, requireAdmin, type QueueCaller } from "@/lib/queues/queue-access";
import { CHAINED_COLUMNS, GENESIS_HASH } from "@/lib/events/event-chain";
import { readChainHead } from "./chain-head";
import { TRUST_EVENT_PREFIXES } from "./list-audit";
import { csvHeadLine, ExportSigner, jsonHeadField } from "./signed-export";

// `GET /audit/export`: the audit view's events (changes of trust) as a file, oldest first, each
// with its place in the hash chain — seq, the previous row's hash and its own — and its content
// exactly as stored, so `audit verify-export` recomputes every row's hash from the file alone.
// The file ends with the signed chain head (lib/audit/signed-export.ts); rows after that head
// (written while the file streams) are left for the next export.

export const ExportAuditQuery = z.object({ format: z.enum(["csv", "json"]).default("csv") });
export type ExportAuditQuery = z.infer<typeof ExportAuditQuery>;

/** Columns of the CSV, and keys of each JSON row: `data` is the stored JSON text, unparsed. */
export const AUDIT_EXPORT_COLUMNS = [
  "seq",
  "time",
  "at",
  "type",
  "runId",
  "batchId",
  "callId",
  "queueId",
  "actorKind",
  "actorId",
  "actorName",
  "data",
  "prevHash",
  "hash",
] as const;

export type AuditExportRow = {
  seq: number;
  time: string;
  at: number;
  type: string;
  runId: string | null;
  batchId: string | null;
  callId: string | null;
  queueId: string | null;
  actorKind: string;
  actorId: string | null;
  actorName: string | null;
  data: string;
  prevHash: string;
  hash: string | null;
};

const PAGE = 500;
const text = (value: unknown) =>
  value === null || value === undefined ? null : Buffer.from(value as ArrayBuffer).toString("utf8");

/**
 * A CSV cell for the audit export: like the history's, a cell a spreadsheet would run as a
 * formula gets a leading quote, but so does a cell that starts with a quote, so the verifier can
 * take exactly one off and hash what is stored. An empty cell is NULL; an empty text is `""`.
 */
export function auditCsvCell(value: string | number | null): string {
  if (value === null) return "";
  if (value === "") return '""';
  const safe =
    typeof value === "string" && /^[=+\-@\t\r']/.test(value) ? `'${value}` : String(value);
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export type AuditExport = {
  filename: string;
  contentType: string;
  body: ReadableStream<Uint8Array>;
};

export async function exportAudit(
  caller: QueueCaller,
  query: unknown,
  now = new Date(),
): Promise<AuditExport> {
  const { format } = parseInput(ExportAuditQuery, query ?? {});
  requireAdmin(await managerOf(getDb(), caller), "export the audit log");
  const csv = format === "csv";
  const head = await readChainHead();
  const signer = new ExportSigner("audit");
  const client = getClient();
  const columns = CHAINED_COLUMNS.map((c) =>
    c === "seq" || c === "at" ? c : `cast(${c} as blob)`,
  );
  const types = TRUST_EVENT_PREFIXES.map(() => "type glob ?").join(" or ");
  let after = 0;
  let written = 0;
  let done = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(
        signer.body(csv ? `${AUDIT_EXPORT_COLUMNS.join(",")}\r\n` : '{"events":['),
      );
    },
    async pull(controller) {
      if (done) {
        if (!csv) controller.enqueue(signer.body(written ? "\n]" : "]"));
        const signed = await signer.head(head);
        controller.enqueue(Buffer.from(csv ? csvHeadLine(signed) : jsonHeadField(signed)));
        controller.close();
        return;
      }
      const page = await client.execute({
        sql: `select ${columns.join(", ")}, hash,
            (select p.hash from events p where p.seq < e.seq order by p.seq desc limit 1)
          from events e where seq > ? and seq <= ? and (${types}) order by seq limit ${PAGE}`,
        args: [after, head.seq, ...TRUST_EVENT_PREFIXES.map((p) => `${p}*`)],
      });
      let chunk = "";
      for (const r of page.rows) {
        const row: AuditExportRow = {
          seq: Number(r[0]),
          time: isoTime(Number(r[2])),
          at: Number(r[2]),
          type: text(r[1])!,
          runId: text(r[3]),
          batchId: text(r[4]),
          callId: text(r[5]),
          queueId: text(r[6]),
          actorKind: text(r[7])!,
          actorId: text(r[8]),
          actorName: text(r[9]),
          data: text(r[10])!,
          hash: r[11] === null ? null : String(r[11]),
          prevHash: r[12] === null || r[12] === undefined ? GENESIS_HASH : String(r[12]),
        };
        chunk += csv
          ? `${AUDIT_EXPORT_COLUMNS.map((c) => auditCsvCell(row[c])).join(",")}\r\n`
          : `${written ? "," : ""}\n${JSON.stringify(row)}`;
        written++;
      }
      if (page.rows.length < PAGE) done = true;
      else after = Number(page.rows[page.rows.length - 1]![0]);
      if (chunk) controller.enqueue(signer.body(chunk));
    },
  });
  const day = now.toISOString().slice(0, 10);
  return {
    filename: `countersign-audit-${day}.${csv ? "csv" : "json"}`,
    contentType: csv
      ? "text/csv; charset=utf-8; header=present"
      : "application/json; charset=utf-8",
    body,
  };
}
