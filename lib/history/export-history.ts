import { count, eq, type SQL } from "drizzle-orm";
import { z } from "zod";
import { getDb, type Executor } from "@/db/client";
import { batches, calls, runs } from "@/db/schema";
import { parseInput } from "@/lib/input/parse";
import { loadBatchViews, type BatchView, type CallView } from "@/lib/read-models/batch-run-views";
import { requireReviewer, type Actor } from "@/lib/auth/actor";
import {
  fromNotAfterTo,
  historyConditions,
  historyFilterFields,
  historyPage,
  withoutEmptyValues,
} from "./list-history";
import { setting } from "@/lib/config/settings";
import { csvHeadLine, ExportSigner, jsonHeadField } from "@/lib/audit/signed-export";
import { latestEvents, type ChainPlace } from "@/lib/audit/chain-places";

// The filtered history as a file to download: CSV (one row per call) or JSON (the batches as the
// API shows them). Streamed a page at a time, and capped so one request cannot walk the whole log.

/** At most this many calls are exported (whole batches only); the response says when it stopped. */
export const EXPORT_CALL_LIMIT = 50_000;

/** The cap in force: HISTORY_EXPORT_CALL_LIMIT lowers (or raises) it, e.g. for tests. */
export function exportCallLimit(): number {
  return setting("HISTORY_EXPORT_CALL_LIMIT");
}
const PAGE_SIZE = 200;

export const ExportHistoryQuery = z
  .object({ ...historyFilterFields, format: z.enum(["csv", "json"]).default("csv") })
  .refine(...fromNotAfterTo);
export type ExportHistoryQuery = z.infer<typeof ExportHistoryQuery>;

export const CSV_COLUMNS = [
  "decidedAt",
  "queue",
  "agent",
  "runId",
  "batchId",
  "kind",
  "toolName",
  "outcome",
  "source",
  "decidedBy",
  "decidedById",
  "decidedByEmail",
  "reason",
  "edited",
  "args",
  "editedArgs",
  // Added later, so at the end: a reader that goes by position keeps working.
  "callId",
  "toolCallId",
  "requestedAt",
  "batchStatus",
  "batchOutcome",
  "planSummary",
  "editedPlanSummary",
  // The event that recorded the row's current state: its place in the event log's hash chain.
  "chainSeq",
  "chainHash",
] as const;

export type HistoryExport = {
  filename: string;
  contentType: string;
  /** the cap on exported calls */
  callLimit: number;
  /** calls matching the filters; more than callLimit means the file is truncated */
  matchingCalls: number;
  truncated: boolean;
  body: ReadableStream<Uint8Array>;
};

/**
 * A spreadsheet runs a cell that starts with = + - @ (or a tab or carriage return, which some
 * strip first) as a formula: a reason such as `=HYPERLINK(…)` would run on the auditor's machine.
 * A leading single quote makes it text.
 */
export function neutralizeFormula(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** One RFC 4180 field: quoted when it holds a comma, a quote or a line break; quotes doubled. */
export function csvField(value: string): string {
  const safe = neutralizeFormula(value);
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function csvLine(fields: string[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}

function callRow(batch: BatchView, call: CallView, place: ChainPlace | undefined): string[] {
  const decision = call.decision;
  const edited = decision?.editedArgs !== null && decision?.editedArgs !== undefined;
  const cancelled = batch.status === "cancelled" && !decision;
  return [
    decision?.at ?? batch.decidedAt ?? "",
    batch.queue.name,
    batch.agent.name,
    batch.runId,
    batch.id,
    batch.kind,
    call.toolName,
    decision?.outcome ?? call.status,
    // a withdrawn batch's calls were settled by the agent, not by a decision
    decision?.source ?? (cancelled ? "agent" : ""),
    // as recorded with the decision: an auditor can tell people apart even after a rename
    decision?.by?.name ?? "",
    decision?.by?.id ?? "",
    decision?.by?.email ?? "",
    decision?.reason ?? (cancelled ? (batch.cancelReason ?? "") : ""),
    edited ? "yes" : "no",
    JSON.stringify(call.args),
    edited ? JSON.stringify(decision!.editedArgs) : "",
    call.id,
    call.toolCallId,
    batch.createdAt,
    batch.status,
    // which call of a mixed batch was rejected: this row's outcome against the batch's
    batch.outcome ?? "",
    batch.plan?.summary ?? "",
    edited ? editedPlanSummary(batch, decision!.editedArgs) : "",
    place ? String(place.seq) : "",
    place?.hash ?? "",
  ];
}

/** A plan approved with an edit: the summary the reviewer wrote (the agent runs that one). */
function editedPlanSummary(batch: BatchView, editedArgs: unknown): string {
  if (batch.kind !== "plan" || typeof editedArgs !== "object" || editedArgs === null) return "";
  const summary = (editedArgs as { summary?: unknown }).summary;
  return typeof summary === "string" && summary !== batch.plan?.summary ? summary : "";
}

export function batchCsvLines(
  batch: BatchView,
  places: Map<string, ChainPlace> = new Map(),
): string {
  return batch.calls
    .map((call) => csvLine(callRow(batch, call, places.get(call.id) ?? places.get(batch.id))))
    .join("");
}

async function countMatchingCalls(db: Executor, where: SQL): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(calls)
    .innerJoin(batches, eq(batches.id, calls.batchId))
    .innerJoin(runs, eq(runs.id, batches.runId))
    .where(where);
  return row?.n ?? 0;
}

/** `GET /history/export`: the filtered history as a CSV or JSON download. */
export async function exportHistory(
  actor: Actor,
  query: unknown,
  now = new Date(),
): Promise<HistoryExport> {
  requireReviewer(actor);
  const input = parseInput(ExportHistoryQuery, withoutEmptyValues(query));
  const db = getDb();
  // Everything that can fail with a 4xx happens here, before the first byte is sent.
  const scope = await historyConditions(db, actor, input);
  const matchingCalls = scope ? await countMatchingCalls(db, scope.where) : 0;
  const callLimit = exportCallLimit();
  const truncated = matchingCalls > callLimit;
  const csv = input.format === "csv";
  const day = now.toISOString().slice(0, 10);

  const signer = new ExportSigner("history");
  let cursor: Parameters<typeof historyPage>[2] = null;
  let exportedCalls = 0;
  let exportedBatches = 0;
  let done = scope === null;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(signer.body(csv ? csvLine([...CSV_COLUMNS]) : '{"batches":['));
    },
    // One page per pull: the client's reading speed paces the queries.
    async pull(controller) {
      if (done) {
        // The signed chain head (lib/audit/signed-export.ts) closes the file.
        if (!csv) controller.enqueue(signer.body(exportedBatches ? "\n]" : "]"));
        const head = await signer.head();
        controller.enqueue(Buffer.from(csv ? csvHeadLine(head) : jsonHeadField(head)));
        controller.close();
        return;
      }
      const page = await historyPage(db, scope!, cursor, PAGE_SIZE);
      let chunk = "";
      const views = await loadBatchViews(db, page.ids, "audit", { emails: true });
      const places = await latestEvents(views);
      for (const batch of views) {
        if (exportedCalls + batch.calls.length > callLimit) {
          done = true;
          break;
        }
        exportedCalls += batch.calls.length;
        chunk += csv
          ? batchCsvLines(batch, places)
          : `${exportedBatches ? "," : ""}\n${JSON.stringify({ ...batch, chain: places.get(batch.id) ?? null })}`;
        exportedBatches++;
      }
      cursor = page.next;
      if (!cursor) done = true;
      if (chunk) controller.enqueue(signer.body(chunk));
    },
    cancel() {
      done = true;
    },
  });

  return {
    filename: `countersign-history-${day}${truncated ? "-partial" : ""}.${csv ? "csv" : "json"}`,
    contentType: csv
      ? "text/csv; charset=utf-8; header=present"
      : "application/json; charset=utf-8",
    callLimit,
    matchingCalls,
    truncated,
    body,
  };
}
