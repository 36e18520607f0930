import { z } from "zod";
import { resourceSchemas } from "@/lib/read-models/resource-schemas";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { definePublicEndpoint, paramNames, type AnyEndpoint, type Endpoint } from "./endpoint";
import { ENDPOINTS } from "./endpoints";
import { TAGS } from "./tags";

// The OpenAPI 3.1 document, built from the endpoints' definitions (lib/contract/endpoints) and the
// very zod schemas that validate requests.

const id = (name: string) => ({ name, in: "path", required: true, schema: { type: "string" } });

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
const SECURITY: Record<Endpoint["auth"], (keyof typeof SECURITY_SCHEMES)[]> = {
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

/** One endpoint as the document's operation. */
function operationOf(op: Endpoint, schemas: Record<string, JsonSchema>) {
  const method = op.method.toLowerCase();
  const parameters = [
    ...paramNames(op.path).map(id),
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
  return {
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

function buildDocument() {
  const schemas: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(resourceSchemas)) {
    const root = schemaOf(schema, schemas);
    // A resource with an id (resource-schemas.ts) comes back as a $ref to the component its
    // $defs just filled: the component is already there.
    if (root.$ref !== `#/components/schemas/${name}`) schemas[name] = root;
  }
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of ENDPOINTS) {
    (paths[endpoint.path] ??= {})[endpoint.method.toLowerCase()] = operationOf(endpoint, schemas);
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
