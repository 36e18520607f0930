import { existsSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { API_ENDPOINTS, openApiDocument } from "@/lib/contract/openapi";
import { ENDPOINTS } from "@/lib/contract/endpoints";
import { handlerFor, matchApiRequest } from "@/lib/http/node-api";

// Each endpoint is defined once (lib/contract/endpoint.ts), and the endpoints the public contract
// states are all served: a definition dropped or renamed by mistake fails here, whatever the
// lists derived from the definitions say.

/**
 * The public contract's endpoints (API.md, "never rename or drop what it states"), written out
 * here rather than derived from anything the server defines: this list changes only when the
 * contract does.
 */
const CONTRACT = [
  // agents
  "POST /api/v1/runs",
  "POST /api/v1/runs/{runId}/batches",
  "GET /api/v1/batches/{batchId}",
  "POST /api/v1/batches/{batchId}/cancel",
  "GET /api/v1/runs/{runId}",
  "POST /api/v1/runs/{runId}/claim",
  "POST /api/v1/runs/{runId}/heartbeat",
  "POST /api/v1/runs/{runId}/events",
  "POST /api/v1/runs/{runId}/complete",
  "POST /api/v1/runs/{runId}/rollback",
  "GET /api/v1/runs/{runId}/stream",
  // reviewers
  "GET /api/v1/queue",
  "POST /api/v1/calls/{callId}/decision",
  "POST /api/v1/batches/{batchId}/decision",
  "GET /api/v1/stream",
  // health and docs
  "GET /api/health",
  "GET /api/v1/openapi.json",
];

/** The methods the production server serves at a path, as its OPTIONS answer lists them. */
async function served(path: string): Promise<string[]> {
  const url = path.replace(/\{\w+\}/g, "some-id");
  const match = matchApiRequest({ method: "OPTIONS", url } as IncomingMessage);
  if (match === null || typeof match === "string") return [];
  if (match.pattern === "/api/v1/[...path]") return [];
  const answer = await handlerFor(match.module, "OPTIONS")(
    new Request(`http://localhost${url}`, { method: "OPTIONS" }),
    {
      params: Promise.resolve(match.params),
    },
  );
  return (answer.headers.get("allow") ?? "").split(/,\s*/);
}

const key = (endpoint: { method: string; path: string }) => `${endpoint.method} ${endpoint.path}`;

describe("the public contract's endpoints", () => {
  it.each(CONTRACT)("%s is served by the production dispatch", async (operation) => {
    const [method, path] = operation.split(" ") as [string, string];
    expect(await served(path)).toContain(method);
  });

  it("are each defined, and documented where the document describes the API", () => {
    const documented = Object.entries(openApiDocument().paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} /api/v1${path}`),
    );
    for (const operation of CONTRACT.filter((op) => op.includes("/api/v1/"))) {
      if (operation === "GET /api/v1/openapi.json") continue;
      expect(documented, operation).toContain(operation);
    }
  });
});

describe("the endpoints' definitions", () => {
  it("define each method and path once", () => {
    const keys = API_ENDPOINTS.map(key);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    const ids = ENDPOINTS.map((endpoint) => endpoint.operationId);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it("name the path params their handlers get, as the document lists them", () => {
    const { paths } = openApiDocument() as unknown as {
      paths: Record<string, Record<string, { parameters: { name: string; in: string }[] }>>;
    };
    for (const endpoint of ENDPOINTS) {
      const operation = paths[endpoint.path]![endpoint.method.toLowerCase()]!;
      expect(
        operation.parameters.filter((p) => p.in === "path").map((p) => p.name),
        key(endpoint),
      ).toEqual([...endpoint.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
    }
  });

  it("replace the route files of the endpoints they define (no endpoint is defined twice)", () => {
    for (const endpoint of API_ENDPOINTS) {
      const file = `app/api/v1${endpoint.path.replace(/\{(\w+)\}/g, "[$1]")}/route.ts`;
      expect(existsSync(file), `${key(endpoint)} is defined and has ${file}`).toBe(false);
    }
  });
});
