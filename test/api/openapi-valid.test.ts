import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openApiDocument } from "@/lib/api/openapi";
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
