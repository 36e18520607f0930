import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/contract/openapi";
import { ERROR_CODES } from "@/lib/errors";

// The served document is what agent developers feed to their generators and validators: it must
// pass the standard ones, not just look right to us.

const run = promisify(execFile);
const redoclyCli = path.resolve("node_modules/@redocly/cli/bin/cli.js");

type Problem = {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
  location: { pointer: string }[];
};

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "countersign-openapi-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function redoclyLint(document: unknown): Promise<Problem[]> {
  const documentFile = path.join(dir, "openapi.json");
  await writeFile(documentFile, JSON.stringify(document));
  // Only the rules we do not follow, each with its reason, on top of redocly's recommended set.
  const configFile = path.join(dir, "redocly.yaml");
  await writeFile(
    configFile,
    [
      "extends: [recommended]",
      "rules:",
      // The project states no licence yet, so the document has none to name; a warning, not an error.
      "  info-license: off",
      "",
    ].join("\n"),
  );
  // The CLI exits 1 when it finds errors; its JSON report on stdout is what we assert on.
  const { stdout } = await run(
    process.execPath,
    [redoclyCli, "lint", documentFile, "--format=json", `--config=${configFile}`],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout: string }) => error);
  return (JSON.parse(stdout) as { problems: Problem[] }).problems;
}

describe("the OpenAPI document", () => {
  it("passes @apidevtools/swagger-parser's validation", async () => {
    // validate() dereferences in place: give it a copy.
    await expect(
      SwaggerParser.validate(structuredClone(openApiDocument()) as never),
    ).resolves.toBeTruthy();
  });

  it("names every operation, tags it with a declared tag and answers its errors with shared responses", () => {
    const document = openApiDocument();
    const declaredTags = new Set(document.tags.map((tag) => tag.name));
    const operations = Object.values(document.paths).flatMap((methods) =>
      Object.values(methods as Record<string, Record<string, any>>),
    );
    const ids = operations.map((operation) => operation.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    for (const operation of operations) {
      expect(operation.tags.length, operation.operationId).toBeGreaterThan(0);
      for (const tag of operation.tags) expect(declaredTags, operation.operationId).toContain(tag);
      const errors = Object.entries(operation.responses as Record<string, any>).filter(
        ([status]) => Number(status) >= 400,
      );
      expect(errors.map(([status]) => status)).toEqual(expect.arrayContaining(["429", "503"]));
      for (const [status, response] of errors) {
        expect(response.$ref, `${operation.operationId} ${status}`).toMatch(
          /^#\/components\/responses\//,
        );
      }
    }
  });

  it("lints with no errors under @redocly/cli's recommended rules", async () => {
    const problems = await redoclyLint(openApiDocument());
    const errors = problems.filter((problem) => problem.severity === "error");
    expect(
      errors.map(
        (problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`,
      ),
    ).toEqual([]);
    // no warnings either (the config turns off only what the test documents): every component is
    // used, every operation named
    expect(problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
  });

  it("names every error code the API answers with", () => {
    const { components } = openApiDocument() as unknown as {
      components: {
        schemas: {
          ErrorResponse: {
            properties: { error: { properties: { code: { description: string } } } };
          };
        };
      };
    };
    const described = components.schemas.ErrorResponse.properties.error.properties.code.description;
    for (const code of ERROR_CODES) expect(described).toContain(code);
  });

  it("has components that reference each other instead of copies", () => {
    const { components } = openApiDocument() as {
      components: { schemas: Record<string, unknown> };
    };
    const refsIn = (name: string) =>
      [...JSON.stringify(components.schemas[name]).matchAll(/#\/components\/schemas\/(\w+)/g)].map(
        (match) => match[1],
      );
    expect(refsIn("Run")).toContain("Batch");
    expect(refsIn("Claim")).toEqual(expect.arrayContaining(["Run", "Batch"]));
    expect(refsIn("QueuePage")).toContain("Batch");
    expect(refsIn("Batch")).toEqual(expect.arrayContaining(["Call", "Plan"]));
    expect(refsIn("Call")).toEqual(expect.arrayContaining(["Decision", "Vote"]));
    // a copy of Batch's own properties appears only in Batch itself
    const copies = Object.entries(components.schemas).filter(
      ([name, schema]) => name !== "Batch" && JSON.stringify(schema).includes('"reviewUrl"'),
    );
    expect(copies.map(([name]) => name)).toEqual([]);
  });
});

// Issue 27: what generated clients need from the document.
describe("the OpenAPI document, for generated clients", () => {
  type Operation = { operationId: string; security: Record<string, string[]>[]; responses: any };
  const operations = () =>
    Object.values(openApiDocument().paths).flatMap((methods) =>
      Object.values(methods as Record<string, Operation>),
    );
  const schemesOf = (operation: Operation) =>
    operation.security.flatMap((requirement) => Object.keys(requirement));

  it("tells agent keys and reviewer tokens apart: two schemes, each with its own bearerFormat", () => {
    const { securitySchemes } = openApiDocument().components as unknown as {
      securitySchemes: Record<string, { type: string; scheme?: string; bearerFormat?: string }>;
    };
    expect(securitySchemes.agentKey).toMatchObject({ type: "http", scheme: "bearer" });
    expect(securitySchemes.reviewerToken).toMatchObject({ type: "http", scheme: "bearer" });
    expect(securitySchemes.agentKey!.bearerFormat).toMatch(/^cs_agent_/);
    expect(securitySchemes.reviewerToken!.bearerFormat).toMatch(/^cs_rev_/);

    // each requirement is one scheme the document declares, and each operation names each once
    for (const operation of operations()) {
      const schemes = schemesOf(operation);
      expect(operation.security.every((r) => Object.keys(r).length === 1)).toBe(true);
      expect(new Set(schemes).size, operation.operationId).toBe(schemes.length);
      for (const scheme of schemes) expect(Object.keys(securitySchemes)).toContain(scheme);
    }
    const byId = new Map(operations().map((operation) => [operation.operationId, operation]));
    // the agent's own operations take an agent key only; the reviewer's never take one
    for (const id of ["createRun", "createBatch", "claimRun", "heartbeatRun", "completeRun"]) {
      expect(schemesOf(byId.get(id)!), id).toEqual(["agentKey"]);
    }
    for (const id of ["decideCall", "decideBatch", "listQueue", "streamQueues", "getMySettings"]) {
      expect(schemesOf(byId.get(id)!), id).toEqual(["reviewerToken", "session"]);
    }
    // both may read a run and its batches
    expect(schemesOf(byId.get("getRun")!)).toEqual(["agentKey", "reviewerToken", "session"]);
    // what leads to a new credential takes a signed-in session only (lib/auth/require-session.ts)
    expect(schemesOf(byId.get("issuePasswordReset")!)).toEqual(["session"]);
  });

  it("describes the streams as text/event-stream messages carrying the Event schema", () => {
    const document = openApiDocument() as any;
    for (const path of ["/runs/{runId}/stream", "/stream"]) {
      const content = document.paths[path].get.responses["200"].content;
      expect(Object.keys(content), path).toEqual(["text/event-stream"]);
      expect(content["text/event-stream"].schema).toEqual({
        $ref: "#/components/schemas/StreamMessage",
      });
    }
    const message = document.components.schemas.StreamMessage;
    expect(Object.keys(message.properties)).toEqual(["id", "event", "data", "retry"]);
    expect(message.properties.data).toMatchObject({
      contentMediaType: "application/json",
      contentSchema: { $ref: "#/components/schemas/Event" },
    });
    expect(message.description).toContain("resync");
  });

  it("names its error schema ErrorResponse, which shadows no language's Error", () => {
    const { components } = openApiDocument() as any;
    expect(Object.keys(components.schemas)).not.toContain("Error");
    for (const response of Object.values(components.responses) as any[]) {
      expect(response.content["application/json"].schema).toEqual({
        $ref: "#/components/schemas/ErrorResponse",
      });
    }
  });

  it("names the installation's absolute address as a server, or as the only one on request", () => {
    expect(openApiDocument().servers.map((server) => server.url)).toEqual(["/api/v1"]);
    expect(
      openApiDocument("https://countersign.example.com/").servers.map((server) => server.url),
    ).toEqual(["/api/v1", "https://countersign.example.com/api/v1"]);
    expect(
      openApiDocument("https://countersign.example.com", "absolute").servers.map(
        (server) => server.url,
      ),
    ).toEqual(["https://countersign.example.com/api/v1"]);
  });
});
