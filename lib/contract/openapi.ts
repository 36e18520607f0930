import { z } from "zod";
import { AgentModeInput } from "@/lib/agents/agent-keys";
import { CreateAgentKeyInput } from "@/lib/agents/create-agent-key";
import { RotateAgentKeyInput } from "@/lib/agents/rotate-agent-key";
import { AuditQuery } from "@/lib/audit/list-audit";
import { ExportAuditQuery } from "@/lib/audit/export-audit";
import { InsightsQuery } from "@/lib/insights/insights-query";
import { InvitePersonInput } from "@/lib/people/invite-person";
import { UpdatePersonInput } from "@/lib/people/update-person";
import { CreateReviewerTokenInput } from "@/lib/reviewer-tokens/create-reviewer-token";
import { SignOutEverywhereInput } from "@/lib/sessions/sign-out-everywhere";
import { SsoSettingsInput } from "@/lib/sso/sso-settings";
import { CreateMcpGatewayInput } from "@/lib/mcp-gateways/create-mcp-gateway";
import { EditMcpGatewayInput } from "@/lib/mcp-gateways/edit-mcp-gateway";
import { resourceSchemas } from "@/lib/read-models/resource-schemas";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { definePublicEndpoint, paramNames, type AnyEndpoint, type Endpoint } from "./endpoint";
import { ENDPOINTS } from "./endpoints";
import { TAGS, type Tag } from "./tags";

// The OpenAPI 3.1 document, built from the very zod schemas that validate requests.

type Operation = {
  /** camelCase verb: generated clients name their methods after it */
  operationId: string;
  tag: Tag;
  summary: string;
  description?: string;
  /** "session": a signed-in reviewer's session cookie only, never a key or token (what leads to a
   * new credential: lib/auth/require-session.ts) */
  auth: "agent" | "reviewer" | "session" | "either";
  body?: z.ZodType;
  query?: z.ZodObject;
  idempotent?: boolean;
  ok: { status: number; schema: string; description?: string };
  /** the success response's media types, when it is not one JSON schema */
  content?: Record<string, unknown>;
  errors: number[];
};

const id = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });

/** Endpoints not yet defined in lib/contract/endpoints: migrated group by group. */
const OPERATIONS: Record<string, Record<string, Operation & { params?: string[] }>> = {
  "/agents": {
    get: {
      operationId: "listAgentKeys",
      tag: "Agents",
      summary:
        "Agent keys, their modes and last use: all of them for admins, those whose default queue they lead for leads",
      auth: "reviewer",
      ok: { status: 200, schema: "AgentKeyList" },
      errors: [401, 403],
    },
    post: {
      operationId: "createAgentKey",
      tag: "Agents",
      summary: "Create an agent key (admins; leads within the queues they lead)",
      description:
        "defaultQueue and queues are queue ids; every one must be open and managed by the caller (400 otherwise). The secret `key` is in this answer only: only its hash is kept. From a signed-in session only (a key or token is 403). Writes an agent.created event.",
      auth: "session",
      body: CreateAgentKeyInput,
      ok: { status: 201, schema: "CreatedAgentKey" },
      errors: [400, 401, 403, 413, 415],
    },
  },
  "/agents/{agentId}/rotate": {
    post: {
      operationId: "rotateAgentKey",
      tag: "Agents",
      summary: "Give an agent key a new secret; the old one keeps working for graceSecs",
      description:
        "graceSecs defaults to 86400 (24 h); 0 stops the old secret at once. A secret still in the grace of an earlier rotation stops at once. The new secret is in this answer only. From a signed-in session only (a key or token is 403). A revoked key is 409 key_revoked. Writes an agent.rotated event.",
      auth: "session",
      params: ["agentId"],
      body: RotateAgentKeyInput,
      ok: { status: 200, schema: "RotatedAgentKey" },
      errors: [400, 401, 403, 404, 409, 413, 415],
    },
  },
  "/agents/{agentId}/revoke": {
    post: {
      operationId: "revokeAgentKey",
      tag: "Agents",
      summary: "Revoke an agent key at once",
      description:
        "Its next request is 401, and its open streams and long-polls end within seconds. Revoking a revoked key answers it unchanged. Writes an agent.revoked event.",
      auth: "reviewer",
      params: ["agentId"],
      ok: { status: 200, schema: "RevokedAgentKey" },
      errors: [401, 403, 404],
    },
  },
  "/reviewer-tokens": {
    get: {
      operationId: "listReviewerTokens",
      tag: "Access",
      summary:
        "Personal tokens by prefix: the caller's own (admins: everyone's, ?user=ID for one person's)",
      auth: "reviewer",
      query: z.object({ user: z.string().optional() }),
      ok: { status: 200, schema: "ReviewerTokenList" },
      errors: [401, 403],
    },
    post: {
      operationId: "createReviewerToken",
      tag: "Access",
      summary: "Create a personal token for the caller; the secret is in this answer only",
      description:
        "From a signed-in session only: a key or token is 403 (a token must not mint its own successor). Writes a reviewer_token.created event.",
      auth: "session",
      body: CreateReviewerTokenInput,
      ok: { status: 201, schema: "CreatedReviewerToken" },
      errors: [400, 401, 403, 413, 415],
    },
  },
  "/reviewer-tokens/{tokenId}/revoke": {
    post: {
      operationId: "revokeReviewerToken",
      tag: "Access",
      summary: "Revoke a personal token (your own; admins: anyone's)",
      description:
        "Its next request is 401 and its open streams end within seconds. Revoking a revoked token answers it unchanged. Writes a reviewer_token.revoked event.",
      auth: "reviewer",
      params: ["tokenId"],
      ok: { status: 200, schema: "RevokedReviewerToken" },
      errors: [401, 403, 404],
    },
  },
  "/sessions/revoke-all": {
    post: {
      operationId: "signOutEverywhere",
      tag: "Access",
      summary:
        "Sign out everywhere: end every session of the caller (and revoke their tokens if asked)",
      description:
        "Every web session of the caller ends, this one included; with revokeTokens every personal token of theirs is revoked too. Their open streams end within seconds. Writes a session.signed_out_everywhere event.",
      auth: "reviewer",
      body: SignOutEverywhereInput,
      ok: { status: 200, schema: "SignedOutEverywhere" },
      errors: [400, 401, 403, 413, 415],
    },
  },
  "/audit": {
    get: {
      operationId: "listAudit",
      tag: "Audit",
      summary:
        "The trust changes in the event log, newest first (admins): agent.*, reviewer_token.*, session.*, person.*, member.*",
      auth: "reviewer",
      query: AuditQuery,
      ok: { status: 200, schema: "AuditLog" },
      errors: [400, 401, 403],
    },
  },
  "/audit/export": {
    get: {
      operationId: "exportAudit",
      tag: "Audit",
      summary:
        "The audit view's events as a download (admins), oldest first, each with its place in the event log's hash chain",
      description:
        "Content-Disposition: attachment; filename=countersign-audit-YYYY-MM-DD.csv|json. Each row: seq, time, at (ms), type, runId, batchId, callId, queueId, actorKind, actorId, actorName, data (the stored JSON text), prevHash and hash, so each row's hash can be recomputed from the file. The file ends with the chain head signed with the server's Ed25519 key (CSV: a last line `#chain-head,seq,hash,signedAt,bodySha256,publicKey,signature`; JSON: a `chainHead` field after `events`). Check it with `npm run admin -- audit verify-export FILE`.",
      auth: "reviewer",
      query: ExportAuditQuery,
      ok: { status: 200, schema: "AuditExport", description: "The file" },
      content: {
        "text/csv": { schema: { type: "string" } },
        "application/json": { schema: { type: "object" } },
      },
      errors: [400, 401, 403],
    },
  },
  "/audit/public-key": {
    get: {
      operationId: "getAuditPublicKey",
      tag: "Audit",
      summary: "The Ed25519 public key that signs the chain head of history and audit exports",
      auth: "reviewer",
      ok: { status: 200, schema: "AuditPublicKey" },
      errors: [401, 403],
    },
  },
  "/insights": {
    get: {
      operationId: "getInsights",
      tag: "Insights",
      summary:
        "Cards created and settled, time to decision, decisions by source, tool and agent, deadlines missed, escalations and reviewers' votes over a period (leads: their queues; admins: every queue)",
      description:
        "One queue (`queue`) or all the caller may see together. Decisions are those of the cards settled in the period. A reviewer who leads no queue gets 403; a queue the caller does not lead, 404. A period may cover at most 366 days.",
      auth: "reviewer",
      query: InsightsQuery,
      ok: { status: 200, schema: "Insights" },
      errors: [400, 401, 403, 404],
    },
  },
  "/people": {
    get: {
      operationId: "listPeople",
      tag: "People",
      summary:
        "People with their queues, status and last sign-in: everyone for admins, the members of the queues they lead for leads",
      auth: "reviewer",
      ok: { status: 200, schema: "PersonList" },
      errors: [401, 403],
    },
    post: {
      operationId: "invitePerson",
      tag: "People",
      summary: "Invite someone by a one-time link, or (admins) create them with a password",
      description:
        "Without `password` the answer carries `invite.url`, shown this once: opening it lets them set a password (7 days, one use). A lead invites only into the queues they lead, as reviewer or lead. An email already used is 409 already_exists (with the person's id; for a lead, when the address belongs to someone outside the queues they lead, with `current: null` and a message that names no one). From a signed-in session only (a key or token is 403). Writes a person.invited (or person.created) event and a member.added per queue.",
      auth: "session",
      body: InvitePersonInput,
      ok: { status: 201, schema: "InvitedPerson" },
      errors: [400, 401, 403, 409, 413, 415],
    },
  },
  "/people/{userId}": {
    patch: {
      operationId: "updatePerson",
      tag: "People",
      summary: "Rename, deactivate or reactivate someone (admins)",
      description:
        "A rename changes no past decision: decisions and votes keep the name (and email) recorded when they were made. Deactivating ends every session of theirs, revokes their personal tokens and retires their open invite and reset links in the same write; they cannot sign in until reactivated (their tokens stay revoked). Nobody deactivates themselves (403), and the last active admin cannot be deactivated (409 last_admin). Writes person.renamed / person.deactivated / person.reactivated events.",
      auth: "reviewer",
      params: ["userId"],
      body: UpdatePersonInput,
      ok: { status: 200, schema: "Person" },
      errors: [400, 401, 403, 404, 409, 413, 415],
    },
  },
  "/people/{userId}/password-reset": {
    post: {
      operationId: "issuePasswordReset",
      tag: "People",
      summary: "A one-time password reset link (admins; leads for members of only their queues)",
      description:
        "The link is in this answer only; it works once, for 24 hours, and replaces any earlier unused one. Using it ends every session of theirs and revokes every personal token of theirs. From a signed-in session only (a key or token is 403: it would mint its own successor). A lead may not reset an admin's password, nor that of someone who belongs to a queue the lead does not lead (403). Writes a person.password_reset_issued event.",
      auth: "session",
      params: ["userId"],
      ok: { status: 201, schema: "OneTimeLink" },
      errors: [401, 403, 404],
    },
  },
  "/agents/{agentId}": {
    patch: {
      operationId: "setAgentMode",
      tag: "Agents",
      summary:
        "Set an agent's mode (admins): ask (rules apply), allow (approve all a rule does not block), deny (reject all that would need a reviewer), off (no gate: approve everything, still logged)",
      auth: "reviewer",
      params: ["agentId"],
      body: AgentModeInput,
      ok: { status: 200, schema: "AgentKey" },
      errors: [400, 401, 403, 404, 413, 415],
    },
  },
  "/sso": {
    get: {
      operationId: "getSsoSettings",
      tag: "SingleSignOn",
      summary: "The single sign-on settings (admins), without the client secret",
      auth: "reviewer",
      ok: { status: 200, schema: "SsoSettings" },
      errors: [401, 403],
    },
    put: {
      operationId: "saveSsoSettings",
      tag: "SingleSignOn",
      summary: "Replace the single sign-on settings (admins)",
      description:
        "The issuer's discovery document (<issuer>/.well-known/openid-configuration) must answer and name the same issuer, or the answer is 400 and nothing is written. clientSecret is write-only: leave it out to keep the stored one. Only an existing, active person (matched by an email the provider verified) signs in, or anyone with a verified email in allowedDomains; groupRoles grant queue roles from the groupsClaim at each sign-in. Writes an sso.settings_updated event.",
      auth: "session",
      body: SsoSettingsInput,
      ok: { status: 200, schema: "SsoSettings" },
      errors: [400, 401, 403, 413, 415],
    },
  },
  "/mcp-gateways": {
    get: {
      operationId: "listMcpGateways",
      tag: "McpGateways",
      summary: "Hosted MCP gateways, with the endpoint to give agents and the agent keys allowed",
      description: "Any reviewer. Header values are never returned, only their names.",
      auth: "reviewer",
      ok: { status: 200, schema: "McpGatewayList" },
      errors: [401, 403],
    },
    post: {
      operationId: "createMcpGateway",
      tag: "McpGateways",
      summary: "Register an upstream MCP server (admins)",
      description:
        "url is checked as webhook targets are (public http(s) addresses, unless the operator allows the host in CALLBACK_ALLOWED_HOSTS), when saved and again when each session connects. headers (the upstream's own token) are write-only: stored sealed, never returned, never given to agents. agents are agent key ids. 409 already_exists for a taken name. Writes an mcp_gateway.created event (header names only).",
      auth: "reviewer",
      body: CreateMcpGatewayInput,
      ok: { status: 201, schema: "McpGatewayAnswer" },
      errors: [400, 401, 403, 409, 413, 415],
    },
  },
  "/mcp-gateways/{gatewayId}": {
    patch: {
      operationId: "editMcpGateway",
      tag: "McpGateways",
      summary: "Edit a hosted MCP gateway (admins), compare-and-swapped on expectedRevision",
      description:
        "Only the fields given change; headers replace every header (omit to keep them). A url on another origin needs the headers again. status: enabled turns a disabled gateway back on. Sessions open on the old settings end at their next request. 409 stale_revision or already_exists with current. Writes an mcp_gateway.updated event naming what changed.",
      auth: "reviewer",
      params: ["gatewayId"],
      body: EditMcpGatewayInput,
      ok: { status: 200, schema: "McpGatewayAnswer" },
      errors: [400, 401, 403, 404, 409, 413, 415],
    },
  },
  "/mcp-gateways/{gatewayId}/disable": {
    post: {
      operationId: "disableMcpGateway",
      tag: "McpGateways",
      summary: "Disable a hosted MCP gateway (admins): agents can no longer connect",
      description:
        "Open sessions end at their next request. Disabling a disabled gateway answers it unchanged. Writes an mcp_gateway.disabled event.",
      auth: "reviewer",
      params: ["gatewayId"],
      ok: { status: 200, schema: "McpGatewayAnswer" },
      errors: [401, 403, 404],
    },
  },
};

const retryAfter = {
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer" } },
};

/** The error answers, shared by every operation that can give them; all carry the ErrorResponse shape. */
const ERROR_RESPONSES: Record<number, { name: string; description: string; headers?: object }> = {
  400: { name: "BadRequest", description: "invalid_request (with issues) or invalid_json" },
  401: { name: "Unauthenticated", description: "unauthenticated" },
  403: { name: "Forbidden", description: "forbidden" },
  404: { name: "NotFound", description: "not_found (also for what the caller may not see)" },
  409: { name: "Conflict", description: "a conflict; `current` is the resource as it is now" },
  413: { name: "PayloadTooLarge", description: "payload_too_large: the body is over the limit" },
  415: { name: "UnsupportedMediaType", description: "unsupported_media_type: send JSON" },
  429: {
    name: "RateLimited",
    description:
      "rate_limited: this client address sent too many unknown bearer keys or tokens (every bearer request is refused until the window ends), or the caller has too many open streams",
    headers: retryAfter,
  },
  503: {
    name: "Unavailable",
    description:
      "unavailable: the database is locked by another process or out of disk; nothing was changed. Retry after the Retry-After header's seconds",
    headers: retryAfter,
  },
};

/**
 * The errors `method` can meet besides those the operation lists: any body sent is read first
 * (400/413/415) and a write with a cross-site session cookie is 403 (lib/http/api-route.ts); any
 * bearer request can be rate limited (429) and any database access find it locked (503).
 */
function errorStatuses(method: string, listed: number[]): number[] {
  const writes = method === "get" ? [] : [400, 403, 413, 415];
  return [...new Set([...listed, ...writes, 429, 503])].sort((a, b) => a - b);
}

type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as JSON Schema whose named parts (those with a `.meta({ id })`, like JsonValue) are
 * components: zod writes them into the schema's own `$defs` and points at `#/$defs/…`, which
 * OpenAPI tools resolve against the document root, where there is no `$defs`.
 */
function schemaOf(schema: z.ZodType, components: Record<string, JsonSchema>, io?: "input") {
  const jsonSchema = z.toJSONSchema(schema, {
    io,
    unrepresentable: "any",
    target: "draft-2020-12",
  });
  // `$schema` names the dialect, which the document's `jsonSchemaDialect` already does
  const {
    $defs = {},
    $schema: _dialect,
    ...rest
  } = JSON.parse(
    JSON.stringify(jsonSchema).replaceAll('"#/$defs/', '"#/components/schemas/'),
  ) as JsonSchema & { $defs?: Record<string, JsonSchema>; $schema?: string };
  for (const [name, def] of Object.entries($defs)) {
    // zod names each recursion without an id `__schema0`: they would overwrite each other.
    if (name.startsWith("__schema")) {
      throw new Error(`A recursive schema without an id (${name}): give it .meta({ id }).`);
    }
    if (components[name] && JSON.stringify(components[name]) !== JSON.stringify(def)) {
      throw new Error(`Two different schemas are named ${name}.`);
    }
    components[name] = def;
  }
  return rest;
}

/**
 * The credentials each kind of operation takes, by security scheme: an agent key and a reviewer
 * token are both `Authorization: Bearer …`, so each is its own scheme (with its own bearerFormat)
 * and an operation names only those it accepts; a generated client then knows which to send.
 */
const SECURITY: Record<Operation["auth"], (keyof typeof SECURITY_SCHEMES)[]> = {
  agent: ["agentKey"],
  reviewer: ["reviewerToken", "session"],
  session: ["session"],
  either: ["agentKey", "reviewerToken", "session"],
};

const SECURITY_SCHEMES = {
  agentKey: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "cs_agent_…",
    description:
      "An agent key (cs_agent_…), sent as `Authorization: Bearer cs_agent_…`: what an agent calls the API with (`npm run admin -- agent create`).",
  },
  reviewerToken: {
    type: "http",
    scheme: "bearer",
    bearerFormat: "cs_rev_…",
    description:
      "A reviewer's personal token (cs_rev_…), sent as `Authorization: Bearer cs_rev_…`: what scripts and embedding hosts call the reviewer endpoints with, as that reviewer.",
  },
  session: {
    type: "apiKey",
    in: "cookie",
    name: "better-auth.session_token",
    description: "The reviewer web app's session cookie (signing in at /sign-in sets it).",
  },
} as const;

/**
 * One message of a server-sent event stream (text/event-stream), as its fields: `id` (the
 * event's seq, to send back as Last-Event-ID), `event` (its type) and `data` (the event as JSON).
 */
const STREAM_MESSAGE = {
  type: "object",
  description:
    'One message of the stream, in the text/event-stream format: `id: <seq>`, `event: <type>`, `data: <the Event as JSON>`, then a blank line. `retry: 2000` comes once first; a comment line (`: keep-alive`) every 15 s keeps proxies from closing the connection. When the Last-Event-ID sent is older than the log keeps, a `resync` message (no id, data `{"reason":"unknown_last_event_id"}`) comes first: refetch, then follow.',
  properties: {
    id: {
      type: "string",
      description:
        "the event's seq: reconnect with it as the Last-Event-ID header (or ?lastEventId=)",
    },
    event: {
      type: "string",
      description:
        "the event's type (run.created, batch.created, call.voted, call.decided, batch.decided, batch.expired, batch.escalated, batch.cancelled, run.claimed, run.lease_expired, tool.completed, tool.failed, run.completed, run.failed, rollback.requested, action.reverted, review.claimed, review.released, …) or resync",
    },
    data: {
      type: "string",
      contentMediaType: "application/json",
      contentSchema: { $ref: "#/components/schemas/Event" },
      description: "the event, as JSON",
    },
    retry: { type: "integer", description: "milliseconds to wait before reconnecting" },
  },
  required: ["data"],
};

/** Where the document's operations are served: relative to it, or at the installation's address. */
export type ServerOption = "relative" | "absolute";

/**
 * The document. Given the installation's address (`publicUrl`: PUBLIC_URL, or the address `npm
 * start` listens on), it is named as a second server, or with `server: "absolute"` as the only
 * one, for clients that cannot resolve a relative URL (a generator run on a saved file, a Node
 * process): `GET /api/v1/openapi.json?server=absolute`.
 */
export function openApiDocument(publicUrl?: string, server: ServerOption = "relative") {
  const relative = { url: "/api/v1", description: "relative to this document's address" };
  const absolute = publicUrl && {
    url: `${publicUrl.replace(/\/+$/, "")}/api/v1`,
    description: "this installation's address (PUBLIC_URL)",
  };
  return {
    ...baseDocument(),
    servers: !absolute ? [relative] : server === "absolute" ? [absolute] : [relative, absolute],
  };
}

let built: ReturnType<typeof buildDocument> | undefined;

// Built once per process: the operations and schemas do not change while it runs.
function baseDocument() {
  return (built ??= buildDocument());
}

/** Every documented operation: the endpoints' definitions, then what is still listed above. */
function operations(): { path: string; method: string; op: Operation }[] {
  const defined = ENDPOINTS.map((endpoint: Endpoint) => ({
    path: endpoint.path,
    method: endpoint.method.toLowerCase(),
    op: endpoint,
  }));
  const listed = Object.entries(OPERATIONS).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({ path, method, op })),
  );
  return [...defined, ...listed];
}

function buildDocument() {
  const schemas: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(resourceSchemas)) {
    const root = schemaOf(schema, schemas);
    // A resource with an id (resource-schemas.ts) comes back as a $ref to the component its
    // $defs just filled: the component is already there.
    if (root.$ref !== `#/components/schemas/${name}`) schemas[name] = root;
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { path, method, op } of operations()) {
    paths[path] ??= {};
    {
      const parameters = [
        ...paramNames(path).map(id),
        ...(op.idempotent
          ? [
              {
                name: "Idempotency-Key",
                in: "header",
                required: false,
                schema: { type: "string", maxLength: 255 },
              },
            ]
          : []),
        ...(op.query
          ? Object.entries(op.query.shape).map(([name, field]) => ({
              name,
              in: "query",
              required: false,
              schema: schemaOf(field as z.ZodType, schemas, "input"),
            }))
          : []),
      ];
      const security = SECURITY[op.auth].map((scheme) => ({ [scheme]: [] }));
      paths[path]![method] = {
        operationId: op.operationId,
        tags: [op.tag],
        summary: op.summary,
        ...(op.description && { description: op.description }),
        security,
        parameters,
        ...(op.body && {
          requestBody: {
            required: true,
            content: { "application/json": { schema: schemaOf(op.body, schemas, "input") } },
          },
        }),
        responses: {
          [op.ok.status]: {
            description: op.ok.description ?? op.ok.schema,
            content: op.content
              ? op.content
              : op.ok.schema === "EventStream"
                ? {
                    "text/event-stream": { schema: { $ref: "#/components/schemas/StreamMessage" } },
                  }
                : {
                    "application/json": {
                      schema: { $ref: `#/components/schemas/${op.ok.schema}` },
                    },
                  },
          },
          ...Object.fromEntries(
            errorStatuses(method, op.errors).map((status) => [
              status,
              { $ref: `#/components/responses/${ERROR_RESPONSES[status]!.name}` },
            ]),
          ),
        },
      };
    }
  }
  return {
    openapi: "3.1.0",
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    info: {
      title: "Countersign API",
      version: "1",
      description:
        "Where AI agents ask people for permission. Times are ISO-8601 UTC; ids are opaque strings. " +
        "Every error answer has the ErrorResponse shape. Besides the errors each operation lists: a method " +
        "an endpoint does not serve is answered 405 `method_not_allowed` with an `Allow` header (and " +
        "`allow` in the error); a client address that sent too many unknown bearer keys or tokens is " +
        "answered 429 `rate_limited` with `Retry-After` (seconds) on every bearer request until the " +
        "window ends. Every answer of `npm start`'s server carries `X-Request-Id`: the request's own " +
        "`X-Request-Id` when it sent one of 1–128 letters, digits and `._:-`, else a new UUID; the " +
        "server's log lines for the request carry the same id. Strings in a body must be Unicode " +
        "(an unpaired surrogate such as `\\ud800` is refused wherever it is, tool args included), " +
        "and a text the API stores (a name, an id, a reason, a summary) refuses control characters " +
        "(reasons, summaries and plans keep tab and line breaks): 400 `invalid_request` naming the " +
        "field. Tool args, metadata and checkpoints are data and keep them. The document names two " +
        "servers, `/api/v1` relative to where it is served and the installation's address " +
        "(PUBLIC_URL); `GET /api/v1/openapi.json?server=absolute` names only the absolute one, " +
        "which generators take as their base URL.",
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      responses: Object.fromEntries(
        Object.values(ERROR_RESPONSES).map(({ name, description, headers }) => [
          name,
          {
            description,
            ...(headers && { headers }),
            content: {
              "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } },
            },
          },
        ]),
      ),
      schemas: { ...schemas, StreamMessage: STREAM_MESSAGE },
    },
  };
}

/** `GET /api/v1/openapi.json`: this document, served to anyone. */
export const openApiJson = definePublicEndpoint({
  method: "GET",
  path: "/openapi.json",
  auth: "none",
  summary: "This document; `?server=absolute` names the installation's address as the only server",
  // Answered per request: that address (PUBLIC_URL) is read when the server runs, not when it is built.
  handler: ({ request }) => {
    const server = new URL(request.url).searchParams.get("server");
    return Response.json(
      openApiDocument(publicBaseUrl(), server === "absolute" ? "absolute" : "relative"),
    );
  },
});

/** Every endpoint under /api/v1: the documented ones and the document itself. */
export const API_ENDPOINTS: readonly AnyEndpoint[] = [...ENDPOINTS, openApiJson];
