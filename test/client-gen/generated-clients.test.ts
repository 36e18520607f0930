import { readFile } from "node:fs/promises";
import { describe, expect, expectTypeOf, it } from "vitest";
import { openApiDocument } from "@/lib/contract/openapi";
import { contractOf, ENUM_NAMES, REVIEW_CARD } from "@/lib/client-gen/contract-types";
import { GENERATE_COMMAND, GENERATED_FILES, generateClients } from "@/lib/client-gen/generate";
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

  it("give the review card its wire types from the same contract", async () => {
    expect(Object.keys(await generateClients())).toContain(
      "components/review-card/contract.gen.ts",
    );

    const grown = structuredClone(openApiDocument()) as any;
    grown.components.schemas.Call.properties.brandNewField = { type: "string" };
    grown.components.schemas.Call.required.push("brandNewField");
    const card = typescriptContract(contractOf(grown, ERROR_CODES), "header", REVIEW_CARD);
    expect(card).toContain("brandNewField: string;");
    // what an older server may leave out stays optional for the card's hosts
    expect(card).toContain("costCurrency?: string;");
    expect(card).toContain("setAside?: {");
    // the card's resources only: no agent-side types, no error code list in its bundle
    expect(card).not.toMatch(/export type Run =|API_ERROR_CODES/);

    const unknownField = { ...REVIEW_CARD, optional: { Batch: ["noSuchField"] } };
    expect(() => typescriptContract(contractOf(grown, ERROR_CODES), "", unknownField)).toThrow(
      /Batch has no field noSuchField/,
    );
  });

  it("leave the review card no hand-written copy of a generated type", async () => {
    const handWritten = await readFile("components/review-card/types.ts", "utf8");
    const generated = await readFile(GENERATED_FILES.reviewCard, "utf8");
    const names = [...generated.matchAll(/^export type (\w+)/gm)].map((match) => match[1]!);
    expect(names).toEqual(expect.arrayContaining([...REVIEW_CARD.types, "Ref"]));
    expect(names).toEqual(expect.arrayContaining(Object.values(ENUM_NAMES)));
    for (const name of names) {
      expect(handWritten, name).not.toMatch(new RegExp(`^export type ${name}\\b`, "m"));
    }
  });

  it("carry every error code the server answers with", async () => {
    const { [GENERATED_FILES.reviewCard]: _card, ...files } = await generateClients();
    for (const content of Object.values(files)) {
      for (const code of ERROR_CODES) expect(content).toContain(`"${code}"`);
    }
  });
});
