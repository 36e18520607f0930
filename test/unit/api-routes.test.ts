import { readdirSync, readFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";
import { API_V1_ROUTES } from "@/app/api/v1/routes";
import { API_ENDPOINTS } from "@/lib/contract/openapi";
import { API_ROUTES } from "@/lib/http/api-routes";
import { matchApiRequest } from "@/lib/http/node-api";

// The production server dispatches API requests itself (lib/http/node-api.ts) from the table in
// lib/http/api-routes.ts: the endpoints' definitions (lib/contract/endpoints, through
// app/api/v1/routes.ts, which Next's catch-all app/api/v1/[...path] serves from too) and the
// route files of their own. A route file missing from it would still work under Next.js but be
// answered by the catch-all's 404 in production: these tests catch that.

function routeFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return routeFiles(path);
    return entry.name === "route.ts" ? [path] : [];
  });
}

/** app/api/v1/runs/[runId]/route.ts → /api/v1/runs/[runId], as the table spells it. */
const patternOf = (file: string) => "/" + relative("app", file).split(sep).slice(0, -1).join("/");

/** The route files the table holds: under app/api/v1 (but the catch-all), health, hosted gateways. */
const apiRouteFiles = [
  ...routeFiles("app/api/v1").filter((file) => !file.includes("[...path]")),
  "app/api/health/route.ts",
  // the hosted MCP gateways (issue 25): served here too, their sessions' streams as answer bodies
  "app/api/mcp/gateways/[name]/route.ts",
];

/** /runs/{runId} → /api/v1/runs/[runId] */
const definedPattern = (path: string) => `/api/v1${path.replace(/\{(\w+)\}/g, "[$1]")}`;

const request = (method: string, url: string) => ({ method, url }) as IncomingMessage;

describe("the production server's table of API routes", () => {
  it("holds every route file under app/api/v1 and every defined endpoint, each once", async () => {
    for (const file of apiRouteFiles) {
      const pattern = patternOf(file);
      expect(API_ROUTES, `${file} is missing from lib/http/api-routes.ts`).toHaveProperty([
        pattern,
      ]);
      expect(API_ROUTES[pattern], `${pattern} points at another file`).toBe(
        await import(/* @vite-ignore */ resolve(file)),
      );
    }
    const defined = [...new Set(API_ENDPOINTS.map((endpoint) => definedPattern(endpoint.path)))];
    for (const pattern of defined) expect(API_ROUTES[pattern]).toBe(API_V1_ROUTES[pattern]);
    // a path is a definition's or a route file's, never both
    const files = apiRouteFiles.map(patternOf);
    expect(defined.filter((pattern) => files.includes(pattern))).toEqual([]);
    expect(Object.keys(API_ROUTES).sort()).toEqual(
      [...files, ...defined, "/api/v1/[...path]"].sort(),
    );
  });

  it("holds only code that works outside Next.js's request context", () => {
    // next/headers, cookies(), after() and friends need the context Next.js sets up per request;
    // lib/ never imports Next.js (lib/README.md, Layout), so the route files are what to check.
    for (const file of [...apiRouteFiles, "app/api/v1/routes.ts"]) {
      expect(readFileSync(file, "utf8"), file).not.toMatch(/from ["']next(\/|["'])/);
    }
  });
});

describe("matching a request to a route file", () => {
  const patternFor = (method: string, url: string) => {
    const match = matchApiRequest(request(method, url));
    return match === null || typeof match === "string" ? match : match.pattern;
  };

  it("prefers static segments, then params, then the catch-all (as Next.js does)", () => {
    expect(patternFor("POST", "/api/v1/policy-rules/try")).toBe("/api/v1/policy-rules/try");
    expect(patternFor("PATCH", "/api/v1/policy-rules/r1")).toBe("/api/v1/policy-rules/[ruleId]");
    expect(patternFor("POST", "/api/v1/runs/r1/batches?x=1")).toBe("/api/v1/runs/[runId]/batches");
    expect(patternFor("GET", "/api/v1/runs/r1/batches/extra")).toBe("/api/v1/[...path]");
    expect(patternFor("GET", "/api/v1/nope")).toBe("/api/v1/[...path]");
    expect(patternFor("GET", "/api/health")).toBe("/api/health");
  });

  it("decodes params, compares static segments as sent, and 404s escapes that do not decode", () => {
    const match = matchApiRequest(request("GET", "/api/v1/runs/a%2Fb%20c"));
    expect(match).toMatchObject({ pattern: "/api/v1/runs/[runId]", params: { runId: "a/b c" } });
    expect(patternFor("POST", "/api/v1/r%75ns")).toBe("/api/v1/[...path]");
    expect(patternFor("GET", "/api/v1/batches/%")).toBe("undecodable");
    expect(patternFor("GET", "/api/auth/%E0%A4%A")).toBe("undecodable");
  });

  it("leaves to Next.js what it redirects or serves itself", () => {
    for (const url of [
      "/api/v1/runs/",
      "/api/v1//runs",
      "/api/v1/runs/x\\y",
      "/api/v1/runs/x/..",
      "/api/v1/runs/%2e%2e",
      "/api/v1",
      "/api/V1/runs",
      "/api/auth/get-session",
      "/api/mcp",
      "/queue",
    ])
      expect(patternFor("GET", url), url).toBeNull();
    expect(patternFor("TRACE", "/api/v1/runs")).toBeNull();
  });
});

describe("Next.js's catch-all route (next dev)", () => {
  // Under `next dev` every /api/v1 request reaches app/api/v1/[...path]/route.ts, which serves it
  // from the same table: the same refusals, options, document and 404 as the production server.
  const call = async (method: string, path: string) => {
    const route = await import("@/app/api/v1/[...path]/route");
    const handler = route[method as "GET"];
    return handler(new Request(`http://localhost${path}`, { method }));
  };

  it("serves the endpoints' methods, refuses the others and lists them", async () => {
    const refused = await call("DELETE", "/api/v1/me");
    expect(refused.status).toBe(405);
    expect(refused.headers.get("allow")).toBe("GET, PATCH, HEAD, OPTIONS");
    expect((await refused.json()).error.code).toBe("method_not_allowed");
    const options = await call("OPTIONS", "/api/v1/runs/r1/claim");
    expect([options.status, options.headers.get("allow")]).toEqual([204, "POST, OPTIONS"]);
    const document = await call("GET", "/api/v1/openapi.json");
    expect((await document.json()).openapi).toBe("3.1.0");
  });

  it("answers the contract's 404 for what is no endpoint, and for escapes that do not decode", async () => {
    for (const path of ["/api/v1/nope", "/api/v1/runs/r1/batches/extra", "/api/v1/runs/%E0%A4%A"]) {
      const answer = await call("GET", path);
      expect(answer.status, path).toBe(404);
      expect((await answer.json()).error.code).toBe("not_found");
    }
  });
});
