import { readFile } from "node:fs/promises";
import { describe, expect, expectTypeOf, it } from "vitest";
import { openApiDocument } from "@/lib/contract/openapi";
import { contractOf } from "@/lib/client-gen/contract-types";
import { GENERATE_COMMAND, generateClients } from "@/lib/client-gen/generate";
import { typescriptContract } from "@/lib/client-gen/typescript";
import { pythonContract } from "@/lib/client-gen/python";
import { ERROR_CODES, type ErrorCode } from "@/lib/errors";
import type { ApiErrorCode } from "@countersign/sdk";

// Issue 27: the SDK's and the Python package's copies of the contract (error codes, resource
// types, request bodies) are generated from the server's definitions and checked in. This test
// regenerates them in memory: a server error code or resource field added without regenerating
// fails here, naming the command that fixes it.

async function checkedIn(file: string): Promise<string | null> {
  return readFile(file, "utf8").catch(() => null);
}

describe("the clients' generated contract files", () => {
  it(`are what \`${GENERATE_COMMAND}\` writes today`, async () => {
    const stale: string[] = [];
    for (const [file, content] of Object.entries(await generateClients())) {
      const onDisk = await checkedIn(file);
      if (onDisk !== content) {
        stale.push(
          `${file} ${onDisk === null ? "is missing" : "differs from the server's contract"}`,
        );
      }
    }
    expect(
      stale,
      `Run \`${GENERATE_COMMAND}\` and commit the result:\n  ${stale.join("\n  ")}`,
    ).toEqual([]);
  }, 30_000);

  it("change when the server adds an error code or a resource field", () => {
    const document = openApiDocument() as never;
    const today = contractOf(document, ERROR_CODES);
    const withCode = contractOf(document, [...ERROR_CODES, "brand_new_code"]);
    const header = "header";
    expect(typescriptContract(withCode, header)).not.toBe(typescriptContract(today, header));
    expect(pythonContract(withCode, header)).toContain('"brand_new_code"');

    const grown = structuredClone(openApiDocument()) as any;
    grown.components.schemas.Call.properties.brandNewField = { type: "string" };
    grown.components.schemas.Call.required.push("brandNewField");
    const withField = contractOf(grown, ERROR_CODES);
    expect(typescriptContract(withField, header)).toContain("brandNewField: string;");
    expect(pythonContract(withField, header)).toContain("    brandNewField: str\n");
  });

  it("give the SDK the server's error codes, no more and no fewer (checked by tsc)", () => {
    expectTypeOf<ApiErrorCode>().toEqualTypeOf<ErrorCode>();
  });

  it("write the Python error codes once: the tuple is read from the Literal", () => {
    const python = pythonContract(contractOf(openApiDocument() as never, ERROR_CODES), "header");
    expect(python).toContain("API_ERROR_CODES: tuple[ApiErrorCode, ...] = get_args(ApiErrorCode)");
    for (const code of ERROR_CODES) {
      expect(python.split(`"${code}"`).length - 1, code).toBe(1);
    }
  });

  it("carry every error code the server answers with", async () => {
    const files = await generateClients();
    for (const content of Object.values(files)) {
      for (const code of ERROR_CODES) expect(content).toContain(`"${code}"`);
    }
  });
});
