import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENDPOINTS } from "@/lib/contract/endpoints";
import { freshDatabase } from "../support/database";
import { startServer, type TestServer } from "../support/server";

let server: TestServer;

beforeAll(async () => {
  server = await startServer({ databaseUrl: await freshDatabase("health") });
});
afterAll(() => server?.stop());

describe("GET /api/health", () => {
  it("answers ok when the database answers", async () => {
    const response = await fetch(`${server.baseUrl}/api/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("is an OpenAPI 3.1 document describing every endpoint of the contract and its extensions", async () => {
    const doc = await (await fetch(`${server.baseUrl}/api/v1/openapi.json`)).json();
    expect(doc.openapi).toBe("3.1.0");
    // every defined endpoint, and nothing else (test/unit/endpoints.test.ts holds the served
    // endpoints to the public contract's own list)
    expect(Object.keys(doc.paths).sort()).toEqual(
      [...new Set(ENDPOINTS.map((endpoint) => endpoint.path))].sort(),
    );
    expect(
      Object.values(doc.paths as Record<string, object>).flatMap((item) => Object.keys(item)),
    ).toHaveLength(ENDPOINTS.length);
    // request bodies come from the zod schemas that validate them
    const createBatch =
      doc.paths["/runs/{runId}/batches"].post.requestBody.content["application/json"].schema;
    expect(createBatch.properties.calls.items.required).toEqual(
      expect.arrayContaining(["toolCallId", "toolName", "args"]),
    );
  });

  it("sets a Content-Security-Policy everywhere; no other site may frame the app", async () => {
    const policy = async (path: string) => {
      const response = await fetch(`${server.baseUrl}${path}`, { redirect: "manual" });
      return {
        csp: response.headers.get("content-security-policy") ?? "",
        frameOptions: response.headers.get("x-frame-options"),
      };
    };
    const directives = [
      "default-src 'self'",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'self'",
      "form-action 'self'",
    ];
    for (const path of ["/queue", "/sign-in?next=/queue", "/embed/batches/x", "/setup"]) {
      const { csp } = await policy(path);
      for (const directive of directives) expect(csp, path).toContain(directive);
    }
    expect((await policy("/queue")).frameOptions).toBe("DENY");
    expect((await policy("/queue")).csp).toMatch(/; frame-ancestors 'none'$/);
    // Inline scripts run only with this response's nonce: a fresh one each time, never
    // 'unsafe-inline', and never 'unsafe-eval' (the card's schema check compiles no code).
    const scriptSources = async (path: string) =>
      /script-src ([^;]*)/.exec((await policy(path)).csp)?.[1] ?? "";
    for (const path of ["/queue", "/sign-in", "/embed/batches/x", "/setup"]) {
      const [first, second] = [await scriptSources(path), await scriptSources(path)];
      expect(first, path).toMatch(/^'self' 'nonce-[A-Za-z0-9+/]{22}=='$/);
      expect(second, path).not.toBe(first);
    }
    const signIn = await fetch(`${server.baseUrl}/sign-in`);
    const nonce = /'nonce-([^']+)'/.exec(signIn.headers.get("content-security-policy")!)![1];
    const html = await signIn.text();
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const script of scripts) expect(script).toContain(`nonce="${nonce}"`);
    // Sign-in may be framed by nobody; the embed (and its own sign-in) names its hosts (proxy.ts).
    expect((await policy("/sign-in?next=/queue")).csp).toMatch(/; frame-ancestors 'none'$/);
    expect((await policy("/sign-in?next=/queue")).frameOptions).toBe("DENY");
    expect((await policy("/embed/batches/x")).csp).toContain("frame-ancestors 'self'");
    expect((await policy("/embed/sign-in")).csp).toContain("frame-ancestors 'self'");
    expect(await policy("/api/v1/openapi.json")).toEqual({
      csp: "default-src 'none'; frame-ancestors 'none'",
      frameOptions: "DENY",
    });
  });

  it("answers unknown API paths with the contract's error shape", async () => {
    const response = await fetch(`${server.baseUrl}/api/v1/nope`);
    expect(response.status).toBe(404);
    expect((await response.json()).error.code).toBe("not_found");
  });
});
