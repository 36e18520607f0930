import { ListHistoryQuery, listHistory } from "@/lib/history/list-history";
import { download, json } from "@/lib/http/api-route";
import { ExportHistoryQuery, exportHistory } from "@/lib/history/export-history";
import { defineEndpoint } from "../endpoint";

export const historyEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/history",
    auth: "reviewer",
    operationId: "listHistory",
    tag: "History",
    summary: "Settled batches of the reviewer's queues, newest decision first, filtered",
    description:
      "Settled means decided, expired or cancelled. Each call's decision says who decided, when, the outcome and the reason. Dates: YYYY-MM-DD (whole UTC days) or ISO-8601 times.",
    query: ListHistoryQuery,
    ok: { status: 200, schema: "HistoryPage" },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => json(await listHistory(actor, query)),
  }),
  defineEndpoint({
    method: "GET",
    path: "/history/export",
    auth: "reviewer",
    operationId: "exportHistory",
    tag: "History",
    summary: "The filtered history as a download: CSV (one row per call) or JSON (batches)",
    description:
      "Content-Disposition: attachment; filename=countersign-history-YYYY-MM-DD.csv|json. JSON is {batches, chainHead}; each batch carries `chain` {seq, hash} and each CSV row `chainSeq` and `chainHash`: the event that recorded its current state. The file ends with the event log's chain head signed with the server's Ed25519 key (CSV: a last line starting `#chain-head`), checked by `npm run admin -- audit verify-export FILE`. Streamed, newest decision first, and capped at 50,000 calls (whole batches): X-Countersign-Export-Limit gives the cap, X-Countersign-Export-Truncated says whether it was reached (the file name then ends in -partial). CSV cells that start with = + - @ are prefixed with a single quote so spreadsheets do not run them.",
    query: ExportHistoryQuery,
    ok: { status: 200, schema: "HistoryExport", description: "The file" },
    content: {
      "text/csv": { schema: { type: "string" } },
      "application/json": {
        schema: {
          type: "object",
          properties: {
            batches: { type: "array", items: { $ref: "#/components/schemas/Batch" } },
            chainHead: {
              type: "object",
              description:
                "the event log's chain head, signed (lib/audit/signed-export.ts): check with `npm run admin -- audit verify-export FILE`",
            },
          },
        },
      },
    },
    errors: [400, 401, 403, 404],
    handler: async ({ actor, query }) => {
      const file = await exportHistory(actor, query);
      return download(file, {
        // The export stops after this many calls (whole batches); truncated says it did.
        "x-countersign-export-limit": String(file.callLimit),
        "x-countersign-export-truncated": String(file.truncated),
        "x-countersign-matching-calls": String(file.matchingCalls),
      });
    },
  }),
];
