import { AuditQuery, listAuditEvents } from "@/lib/audit/list-audit";
import { download, json } from "@/lib/http/api-route";
import { ExportAuditQuery, exportAudit } from "@/lib/audit/export-audit";
import { auditPublicKey } from "@/lib/audit/signing-key";
import { defineEndpoint } from "../endpoint";

export const auditEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/audit",
    auth: "reviewer",
    operationId: "listAudit",
    tag: "Audit",
    summary:
      "The trust changes in the event log, newest first (admins): agent.*, reviewer_token.*, session.*, person.*, member.*",
    query: AuditQuery,
    ok: { status: 200, schema: "AuditLog" },
    errors: [400, 401, 403],
    handler: async ({ actor, query }) => json(await listAuditEvents(actor, query)),
  }),
  defineEndpoint({
    method: "GET",
    path: "/audit/export",
    auth: "reviewer",
    operationId: "exportAudit",
    tag: "Audit",
    summary:
      "The audit view's events as a download (admins), oldest first, each with its place in the event log's hash chain",
    description:
      "Content-Disposition: attachment; filename=countersign-audit-YYYY-MM-DD.csv|json. Each row: seq, time, at (ms), type, runId, batchId, callId, queueId, actorKind, actorId, actorName, data (the stored JSON text), prevHash and hash, so each row's hash can be recomputed from the file. The file ends with the chain head signed with the server's Ed25519 key (CSV: a last line `#chain-head,seq,hash,signedAt,bodySha256,publicKey,signature`; JSON: a `chainHead` field after `events`). Check it with `npm run admin -- audit verify-export FILE`.",
    query: ExportAuditQuery,
    ok: { status: 200, schema: "AuditExport", description: "The file" },
    content: {
      "text/csv": { schema: { type: "string" } },
      "application/json": { schema: { type: "object" } },
    },
    errors: [400, 401, 403],
    handler: async ({ actor, query }) => {
      return download(await exportAudit(actor, query));
    },
  }),
  defineEndpoint({
    method: "GET",
    path: "/audit/public-key",
    auth: "reviewer",
    operationId: "getAuditPublicKey",
    tag: "Audit",
    summary: "The Ed25519 public key that signs the chain head of history and audit exports",
    ok: { status: 200, schema: "AuditPublicKey" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await auditPublicKey(actor)),
  }),
];
