import { readdirSync } from "node:fs";
import { API_ENDPOINTS } from "@/lib/contract/openapi";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { ERROR_CODES } from "@/lib/errors";
import { pausedRun, startApiServer, writeSnapshot } from "../support/api-fixtures";
import { makeAgentKey, makeQueue, makeReviewer } from "../support/factories";
import { apiClient, refundBatch } from "../support/http";
import { sessionCookie } from "../support/sessions";
import {
  brokenJsonText,
  contentType,
  garbageId,
  headerValue,
  hostileJson,
  hostileObject,
  hostileQuery,
  hugeHeaderValue,
  MALFORMED_ENCODINGS,
  nastyString,
  unstorableText,
} from "./hostile";

// Issue 7: a property-based fuzzer over every endpoint the server's own OpenAPI document lists
// (so a new endpoint is fuzzed without touching this file), plus the MCP endpoint. Invariants per
// request: never a 5xx; a 4xx is a contract error `{ error: { code, message } }` and wrote nothing;
// anything else is a 2xx (the input happened to be valid). The server must still answer
// /api/health after each endpoint's runs. FUZZ_SEED picks another seed; FUZZ_RUNS another budget.

const SEED = Number(process.env.FUZZ_SEED ?? 7_2026);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const LIMIT = 32 * 1024;

// Every code of the contract (lib/errors.ts, named in the OpenAPI document) but the two that mean
// the server failed: the fuzzer must never meet those.
const CONTRACT_CODES = new Set<string>(
  ERROR_CODES.filter((code) => code !== "internal_error" && code !== "unavailable"),
);
const CONTRACT_4XX = new Set([400, 401, 403, 404, 405, 409, 413, 415, 422, 429]);

type Method = "GET" | "POST" | "PATCH" | "PUT" | "DELETE";
type Operation = {
  method: Method;
  /** as the OpenAPI document writes it, `{runId}` and all */
  template: string;
  auth: "agent" | "reviewer" | "either";
  sessionOnly: boolean;
  bodyFields: string[] | null;
  queryNames: string[];
  stream: boolean;
};
type FuzzRequest = {
  method: Method;
  url: string;
  headers: Record<string, string>;
  body?: string;
};
type Answer = { status: number; body: any; stream: boolean; allow: string | null };

// Forged bearer credentials are part of the fuzz; the guessing limit (test/api/bearer-rate-limit)
// would otherwise soon answer every request from this address 429 and end the fuzzing.
const server = await startApiServer("fuzz", {
  MAX_BODY_BYTES: String(LIMIT),
  BEARER_FAILURES_PER_WINDOW: "1000000",
});
afterAll(() => server?.stop());

const queue = await makeQueue();
const reviewer = await makeReviewer({
  name: "Fuzz Admin",
  queues: [{ name: queue.name, role: "admin" }],
});
const agent = await makeAgentKey({ name: "Fuzz bot", queues: [queue.name] });
// The agent-key endpoints revoke and rotate the key they name: they aim at a key the fuzz does not
// authenticate with, or the fuzz would lock itself out (issue 14).
const target = await makeAgentKey({ name: "Fuzz target", queues: [queue.name] });
// Likewise "sign out everywhere" (which may revoke the caller's own tokens) is sent as a reviewer
// whose token nothing else uses.
const bystander = await makeReviewer({ name: "Fuzz bystander", queues: [{ name: queue.name }] });
const SELF_REVOKING = new Set(["/sessions/revoke-all"]);
const { batch } = await pausedRun(apiClient(server.baseUrl, agent.key), refundBatch());
/** Real ids by path parameter name: most requests aim at something that exists. */
const REAL_IDS: Record<string, string> = {
  runId: batch.runId,
  batchId: batch.id,
  callId: batch.calls[0].id,
  queueId: queue.id,
  userId: reviewer.id,
  agentId: target.id,
};
const TOKENS = { agent: agent.key, reviewer: reviewer.token };
let sessionCookieOfReviewer: Promise<string> | undefined;
/** The admin's session, signed in once, for the operations that take no token. */
const adminSessionCookie = () =>
  (sessionCookieOfReviewer ??= sessionCookie(server.baseUrl, reviewer.email));

const document = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json();
const operations: Operation[] = Object.entries(
  document.paths as Record<string, Record<string, any>>,
).flatMap(([template, methods]) =>
  Object.entries(methods).map(([method, op]) => {
    const kinds = (op.security as Record<string, unknown>[]).flatMap(Object.keys);
    const schema = op.requestBody?.content?.["application/json"]?.schema;
    return {
      method: method.toUpperCase() as Method,
      template,
      auth: kinds.includes("agentKey")
        ? kinds.includes("reviewerToken")
          ? "either"
          : "agent"
        : "reviewer",
      // what leads to a new credential takes the web app's session, never a token (issue 24)
      sessionOnly: kinds.length === 1 && kinds[0] === "session",
      bodyFields: schema ? Object.keys(schema.properties ?? {}) : null,
      queryNames: (op.parameters as { in: string; name: string }[])
        .filter((p) => p.in === "query")
        .map((p) => p.name),
      stream: Boolean(op.responses?.["200"]?.content?.["text/event-stream"]),
    } satisfies Operation;
  }),
);

// What the run tried, for the closing note.
const statuses = new Map<number, number>();
let tried = 0;
const started = Date.now();

afterAll(() => {
  const distribution = [...statuses.entries()].sort(([a], [b]) => a - b);
  console.log(
    `api-fuzz: seed ${SEED}, ${RUNS} runs per property, ${tried} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
      `statuses ${distribution.map(([s, n]) => `${s}×${n}`).join(", ")}`,
  );
});

async function send(request: FuzzRequest): Promise<Answer> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 15_000);
  try {
    const response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: controller.signal,
      redirect: "manual",
    });
    tried++;
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    if ((response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
      controller.abort();
      return { status: response.status, body: null, stream: true, allow: null };
    }
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: checked below
    }
    return { status: response.status, body, stream: false, allow: response.headers.get("allow") };
  } finally {
    clearTimeout(timer);
  }
}

const describeRequest = (r: FuzzRequest) =>
  `${r.method} ${r.url.replace(server.baseUrl, "")} headers=${JSON.stringify(r.headers).slice(0, 400)} body=${JSON.stringify(r.body?.slice(0, 400))}`;

/**
 * The invariants. `mcp`: the MCP endpoint, whose refusals inside a 200 are JSON-RPC errors.
 */
async function checkRequest(request: FuzzRequest, label: string, mcp = false) {
  const before = await writeSnapshot();
  const answer = await send(request);
  const what = `${label}: ${describeRequest(request)} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 300)}`;
  expect(answer.status, what).toBeLessThan(500);
  if (answer.status >= 400) {
    // MCP's transport answers a client that does not accept JSON and SSE with 406 (the MCP spec's answer).
    const allowed = CONTRACT_4XX.has(answer.status) || (mcp && answer.status === 406);
    expect(allowed, what).toBe(true);
    const error = answer.body?.error;
    // A 405 says what would be served (Next's own bare 405 has neither body nor Allow).
    if (answer.status === 405) expect(answer.allow, `405 without Allow — ${what}`).toBeTruthy();
    if (mcp && answer.body?.jsonrpc === "2.0") {
      // the MCP transport refuses malformed JSON-RPC in JSON-RPC's own error shape
      expect(typeof error?.code, what).toBe("number");
      expect(typeof error?.message, what).toBe("string");
    } else {
      expect(Object.keys(answer.body ?? {}), what).toEqual(["error"]);
      expect(typeof error.message, what).toBe("string");
      const known = CONTRACT_CODES.has(error.code);
      expect(known, `unknown code ${error.code} — ${what}`).toBe(true);
    }
    expect(await writeSnapshot(), `a refused request wrote — ${what}`).toEqual(before);
  } else {
    expect(answer.status, what).toBeGreaterThanOrEqual(200);
    expect(answer.status, what).toBeLessThan(300);
    if (mcp && answer.body && typeof answer.body === "object" && "error" in answer.body) {
      expect(await writeSnapshot(), `a JSON-RPC error wrote — ${what}`).toEqual(before);
    }
  }
}

async function expectHealthy(after: string) {
  const health = await fetch(`${server.baseUrl}/api/health`);
  expect(health.status, `GET /api/health after ${after}`).toBe(200);
}

/** Valid credentials for the operation (both kinds for "either"), now and then a forged one. */
function authHeader(auth: Operation["auth"], template?: string) {
  const valid = SELF_REVOKING.has(template ?? "")
    ? [bystander.token]
    : auth === "either"
      ? [TOKENS.agent, TOKENS.reviewer]
      : [TOKENS[auth]];
  return fc.oneof(
    { weight: 8, arbitrary: fc.constantFrom(...valid).map((t) => `Bearer ${t}`) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.constantFrom("Bearer", "Bearer ", "Basic Zm9vOmJhcg==", `Bearer ${TOKENS.agent}x`),
        headerValue.map((v) => `Bearer cs_agent_${v}`),
      ),
    },
  );
}

const extraHeaders = fc.record(
  {
    "idempotency-key": headerValue,
    "last-event-id": headerValue,
    cookie: headerValue.map((v) => `better-auth.session_token=${v}`),
    accept: fc.constantFrom("*/*", "text/event-stream", "application/xml", "", "application/json"),
    "x-forwarded-for": headerValue,
    "x-huge": hugeHeaderValue,
  },
  { requiredKeys: [] },
);

type Body = { contentType?: string; body?: string };

function bodyArbitrary(fields: string[]): fc.Arbitrary<Body> {
  const json = (body: string): Body => ({ contentType: "application/json", body });
  return fc.oneof(
    hostileObject(fields).map((v) => json(JSON.stringify(v))),
    hostileJson.map((v) => json(JSON.stringify(v) ?? "null")),
    brokenJsonText.map(json),
    fc
      .tuple(
        contentType,
        fc.oneof(
          hostileObject(fields).map((v) => JSON.stringify(v)),
          brokenJsonText,
        ),
      )
      .map(([contentType, body]) => ({ contentType, body })),
    // around the body limit: just under is read (and refused on its fields), just over is 413
    fc
      .tuple(fc.constantFrom(...fields, "x"), fc.integer({ min: LIMIT - 300, max: LIMIT + 300 }))
      .map(([field, size]) =>
        json(JSON.stringify({ [field]: "x".repeat(size - field.length - 7) })),
      ),
    fc.constant<Body>({}),
  );
}

function pathArbitrary(template: string): fc.Arbitrary<string> {
  const names = [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  const ids = names.map((name) =>
    REAL_IDS[name]
      ? fc.oneof(
          { weight: 3, arbitrary: fc.constant(REAL_IDS[name]) },
          { weight: 1, arbitrary: garbageId },
        )
      : garbageId,
  );
  return fc.tuple(...ids).map((chosen) => {
    let i = 0;
    return template.replace(/\{\w+\}/g, () => chosen[i++]!);
  });
}

function requestArbitrary(op: Operation): fc.Arbitrary<FuzzRequest> {
  const canHaveBody = op.method !== "GET";
  return fc
    .record({
      path: pathArbitrary(op.template),
      query: hostileQuery(op.queryNames),
      authorization: authHeader(op.auth, op.template),
      headers: extraHeaders,
      body: canHaveBody ? bodyArbitrary(op.bodyFields ?? ["reason"]) : fc.constant<Body>({}),
    })
    .map(({ path, query, authorization, headers, body }) => ({
      method: op.method,
      url: `${server.baseUrl}/api/v1${path}${query ? `?${query}` : ""}`,
      headers: {
        ...headers,
        authorization,
        ...(body.contentType !== undefined && { "content-type": body.contentType }),
      },
      body: body.body,
    }));
}

describe("the OpenAPI document lists the endpoints to fuzz", () => {
  it("has the contract's endpoints, each with an auth kind", () => {
    const listed = operations.map((op) => `${op.method} ${op.template}`);
    for (const endpoint of [
      "POST /runs",
      "POST /runs/{runId}/batches",
      "GET /batches/{batchId}",
      "POST /calls/{callId}/decision",
      "GET /stream",
    ])
      expect(listed).toContain(endpoint);
  });
});

describe.each(operations.map((op) => [`${op.method} ${op.template}`, op] as const))(
  "fuzzing %s",
  (label, op) => {
    it("answers hostile input with a contract 4xx (or 2xx), never a 5xx, and refusals write nothing", async () => {
      await fc.assert(
        fc.asyncProperty(requestArbitrary(op), (request) => checkRequest(request, label)),
        { seed: SEED + operations.indexOf(op), numRuns: RUNS },
      );
      await expectHealthy(label);
    }, 120_000);
  },
);

// Issue 24, hole 6: every text a write endpoint stores refuses control characters and unpaired
// surrogates with a 400 naming the field (lib/text/stored-text.ts). The text fields are read from
// the OpenAPI document, so a new endpoint's are held to it too: every string a body may carry,
// at any depth, but those whose format, pattern or enum already bounds it and the secrets below.
type JsonSchemaNode = Record<string, any>;
const components = (document.components?.schemas ?? {}) as Record<string, JsonSchemaNode>;
// Secrets are hashed or sealed, never shown or compared as text; the body's lone-surrogate check
// still applies to them.
const NOT_TEXT = new Set(["password", "clientSecret"]);
// Checked against a closed list (IANA zones): refused by it, in its own words.
const CLOSED_LIST = new Set(["timeZone"]);

function textPaths(node: JsonSchemaNode | undefined, path: string[] = [], depth = 0): string[][] {
  if (!node || depth > 6) return [];
  // JsonValue is data (a policy predicate's value is compared with args, which keep control
  // characters); only lone surrogates are refused in it, as in any body.
  if (node.$ref === "#/components/schemas/JsonValue") return [];
  if (node.$ref) return textPaths(components[String(node.$ref).split("/").pop()!], path, depth + 1);
  const alternatives = [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])];
  if (alternatives.length > 0) {
    const found = alternatives.flatMap((alt: JsonSchemaNode) => textPaths(alt, path, depth + 1));
    return [...new Map(found.map((p) => [p.join("."), p])).values()];
  }
  if (node.type === "string") {
    const bounded = node.enum || node.const !== undefined || node.format || node.pattern;
    return bounded || NOT_TEXT.has(path.at(-1) ?? "") ? [] : [path];
  }
  if (node.type === "array") return textPaths(node.items, [...path, "0"], depth + 1);
  if (node.type === "object")
    return Object.entries((node.properties ?? {}) as Record<string, JsonSchemaNode>).flatMap(
      ([name, child]) => textPaths(child, [...path, name], depth + 1),
    );
  return [];
}

/** `{ a: { b: [ { c: value } ] } }` for the path a.b.0.c */
function bodyAt(path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  return /^\d+$/.test(head!) ? [bodyAt(rest, value)] : { [head!]: bodyAt(rest, value) };
}

const textFields = operations.flatMap((op) => {
  const source = document.paths[op.template][op.method.toLowerCase()];
  const schema = source.requestBody?.content?.["application/json"]?.schema;
  return textPaths(schema).map((path) => ({ op, path }));
});

describe("text fields refuse control characters and lone surrogates", () => {
  it("finds the stored texts of the write endpoints in the document", () => {
    const labels = textFields.map(
      ({ op, path }) => `${op.method} ${op.template} ${path.join(".")}`,
    );
    for (const expected of [
      "PATCH /people/{userId} name",
      "POST /calls/{callId}/decision reason",
      "POST /runs batch.plan.summary",
      "POST /runs/{runId}/batches calls.0.risks.0",
      "POST /queues name",
      "POST /policy-rules reason",
      "POST /views name",
      "PUT /sso displayName",
    ])
      expect(labels).toContain(expected);
    console.log(
      `api-fuzz: ${textFields.length} text fields on ${new Set(textFields.map((f) => f.op)).size} write endpoints`,
    );
  });

  it.each(
    textFields.map(
      (field) =>
        [`${field.op.method} ${field.op.template} ${field.path.join(".")}`, field] as const,
    ),
  )(
    "%s: a 400 naming the field, never a 5xx, nothing written",
    async (label, { op, path }) => {
      const url = `${server.baseUrl}/api/v1${op.template.replace(/\{(\w+)\}/g, (_, name: string) => REAL_IDS[name] ?? "no-such-id")}`;
      const token = SELF_REVOKING.has(op.template)
        ? bystander.token
        : op.auth === "agent"
          ? TOKENS.agent
          : TOKENS.reviewer;
      const credential: Record<string, string> = op.sessionOnly
        ? { cookie: await adminSessionCookie(), origin: server.baseUrl }
        : { authorization: `Bearer ${token}` };
      await fc.assert(
        fc.asyncProperty(unstorableText, async ({ text, kind }) => {
          const request: FuzzRequest = {
            method: op.method,
            url,
            headers: { ...credential, "content-type": "application/json" },
            body: JSON.stringify(bodyAt(path, text)),
          };
          await checkRequest(request, label);
          const answer = await send(request);
          const what = `${describeRequest(request)} → ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 400)}`;
          expect(answer.status, what).toBe(400);
          expect(answer.body.error.code, what).toBe("invalid_request");
          expect(answer.body.error.issues, what).toContainEqual({
            path: path.join("."),
            message: CLOSED_LIST.has(path.at(-1)!)
              ? expect.any(String)
              : kind === "surrogate"
                ? expect.stringMatching(/^is not valid Unicode text/)
                : expect.stringMatching(/control characters|one line/),
          });
        }),
        { seed: SEED + textFields.findIndex((f) => f.op === op && f.path === path), numRuns: 4 },
      );
    },
    60_000,
  );
});

describe("path ids whose percent-encoding does not decode", () => {
  // Kept out of the general properties and in one test: one cause would otherwise fail every
  // endpoint with an id and hide whatever else the fuzzer finds there.
  it("answer a contract 4xx on every endpoint with an id, not a 5xx", async () => {
    const failures: string[] = [];
    for (const op of operations.filter((op) => op.template.includes("{")))
      for (const id of MALFORMED_ENCODINGS) {
        const path = op.template.replace(/\{\w+\}/g, id);
        await checkRequest(
          {
            method: op.method,
            url: `${server.baseUrl}/api/v1${path}`,
            headers: {
              authorization: `Bearer ${op.auth === "agent" ? TOKENS.agent : TOKENS.reviewer}`,
              ...(op.method !== "GET" && { "content-type": "application/json" }),
            },
            body: op.method === "GET" ? undefined : "{}",
          },
          `${op.method} ${op.template}`,
        ).catch((error: Error) => failures.push(error.message.split("\n")[0]!.slice(0, 300)));
      }
    expect(failures).toEqual([]);
  });
});

describe("fuzzing methods the document does not list", () => {
  it("answers a contract error (405 method_not_allowed with Allow), never a 5xx", async () => {
    const listed = new Map<string, Set<Method>>();
    for (const op of operations)
      listed.set(op.template, (listed.get(op.template) ?? new Set()).add(op.method));
    const unlisted = [...listed].flatMap(([template, methods]) =>
      (["GET", "POST", "PATCH", "PUT", "DELETE"] as const)
        .filter((m) => !methods.has(m))
        .map((method) => ({ template, method })),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...unlisted).chain(({ template, method }) =>
          fc.record({
            template: fc.constant(template),
            method: fc.constant(method),
            path: pathArbitrary(template),
            authorization: authHeader("either"),
            body: bodyArbitrary(["reason"]),
          }),
        ),
        ({ template, method, path, authorization, body }) =>
          checkRequest(
            {
              method,
              url: `${server.baseUrl}/api/v1${path}`,
              headers: {
                authorization,
                ...(body.contentType !== undefined && { "content-type": body.contentType }),
              },
              body: method === "GET" ? undefined : body.body,
            },
            `${method} ${template}`,
          ),
      ),
      { seed: SEED, numRuns: RUNS * 2 },
    );
    await expectHealthy("unlisted methods");
  }, 120_000);
});

describe("every route answers every method in the contract's shape", () => {
  // Walks app/api's route files and every defined endpoint (lib/contract/endpoints) rather than
  // the OpenAPI document, so health, auth, MCP and the document itself are held to it too. The auth
  // catch-all is probed at a path better-auth does not serve: its own endpoints answer in
  // better-auth's shape (POST /api/auth/get-session is its own 405), not the API contract's.
  const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;
  const routeDir = path.join(process.cwd(), "app/api");
  const routes = readdirSync(routeDir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith("route.ts") && !file.includes("[...path]"))
    .map((file) =>
      `/api/${path.dirname(file)}`
        .replace(/\[\.\.\.\w+\]/g, "no-such-endpoint")
        .replace(/\[\w+\]/g, "no-such-id"),
    )
    .concat(
      [...new Set(API_ENDPOINTS.map((endpoint) => endpoint.path))].map(
        (path) => `/api/v1${path.replace(/\{\w+\}/g, "no-such-id")}`,
      ),
    );

  it("405 method_not_allowed with Allow for a method not served, and OPTIONS agrees", async () => {
    expect(routes.length).toBeGreaterThan(30);
    const failures: string[] = [];
    for (const route of routes) {
      const url = `${server.baseUrl}${route}`;
      // MCP authenticates before anything else; elsewhere no credentials keeps every served
      // method from writing.
      const headers: Record<string, string> =
        route === "/api/mcp" ? { authorization: `Bearer ${TOKENS.agent}` } : {};
      const options = await fetch(url, { method: "OPTIONS", headers });
      const allow = (options.headers.get("allow") ?? "").split(/,\s*/).filter(Boolean);
      if (options.status !== 204 || !allow.includes("OPTIONS"))
        failures.push(`OPTIONS ${route} → ${options.status} Allow: ${allow}`);
      for (const method of METHODS.filter((m) => m !== "OPTIONS")) {
        const response = await fetch(url, { method, headers, redirect: "manual" });
        const text = await response.text();
        const what = `${method} ${route} → ${response.status} ${text.slice(0, 120)}`;
        if (response.status >= 500) failures.push(what);
        if (allow.includes(method) !== (response.status !== 405))
          failures.push(`${what} (OPTIONS said Allow: ${allow})`);
        if (response.status !== 405) continue;
        if (!response.headers.get("allow")) failures.push(`${what} without Allow`);
        if (method !== "HEAD" && JSON.parse(text || "{}").error?.code !== "method_not_allowed")
          failures.push(`${what} is not method_not_allowed`);
      }
    }
    expect(failures).toEqual([]);
  }, 60_000);
});

describe("fuzzing POST /api/mcp", () => {
  const rpc = fc.record(
    {
      jsonrpc: fc.oneof(fc.constant("2.0"), hostileJson),
      id: fc.oneof(fc.integer(), nastyString, hostileJson),
      method: fc.oneof(
        fc.constantFrom("initialize", "tools/list", "tools/call", "ping", "resources/list"),
        nastyString,
      ),
      params: fc.oneof(
        fc.record(
          {
            name: fc.oneof(fc.constantFrom("request_approval", "get_approval"), nastyString),
            arguments: fc.oneof(
              hostileObject(["batchId", "toolName", "args", "calls", "wait"]),
              hostileJson,
            ),
          },
          { requiredKeys: [] },
        ),
        hostileJson,
      ),
    },
    { requiredKeys: [] },
  );
  const body: fc.Arbitrary<Body> = fc.oneof(
    {
      weight: 3,
      arbitrary: rpc.map((m) => ({ contentType: "application/json", body: JSON.stringify(m) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(rpc, { maxLength: 3 })
        .map((m) => ({ contentType: "application/json", body: JSON.stringify(m) })),
    },
    { weight: 2, arbitrary: bodyArbitrary(["jsonrpc", "id", "method", "params"]) },
  );

  it("answers hostile JSON-RPC with a contract 4xx or a 2xx, never a 5xx, and refusals write nothing", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          authorization: authHeader("agent"),
          accept: fc.constantFrom(
            "application/json, text/event-stream",
            "application/json",
            "*/*",
            "",
          ),
          body,
        }),
        ({ authorization, accept, body }) =>
          checkRequest(
            {
              method: "POST",
              url: `${server.baseUrl}/api/mcp`,
              headers: {
                authorization,
                accept,
                ...(body.contentType !== undefined && { "content-type": body.contentType }),
              },
              body: body.body,
            },
            "POST /api/mcp",
            true,
          ),
      ),
      { seed: SEED, numRuns: RUNS * 2 },
    );
    await expectHealthy("POST /api/mcp");
  }, 120_000);
});
