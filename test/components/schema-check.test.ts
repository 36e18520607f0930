import { describe, expect, it } from "vitest";
import { compileSchema, type SchemaCheck } from "@/components/review-card/schema-check";

// The card's own JSON Schema check (no code generation, so no 'unsafe-eval'): what it reports,
// worded like the server's Ajv answer, under the drafts agents' tool schemas declare.

function checker(schema: Record<string, unknown>): Extract<SchemaCheck, { usable: true }>["check"] {
  const compiled = compileSchema(schema);
  if (!compiled.usable) throw new Error(compiled.problem);
  return compiled.check;
}

describe("compileSchema", () => {
  const refund = {
    type: "object",
    $defs: { amount: { type: "number", maximum: 100 } },
    properties: {
      orderId: { type: "string", pattern: "^A-" },
      amount: { $ref: "#/$defs/amount" },
      tags: { type: "array", items: { enum: ["a", "b"] }, maxItems: 1 },
      kind: { anyOf: [{ type: "string" }, { type: "number" }] },
      reason: { type: "string" },
    },
    required: ["orderId", "amount", "reason"],
    additionalProperties: false,
  };

  it("lists every problem at once, by path, in the server's words", () => {
    const issues = checker(refund)({
      orderId: "B",
      amount: 500,
      x: 1,
      tags: ["c", "a"],
      kind: true,
    });
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: "(root)", message: 'must have required property "reason"' },
        { path: "orderId", message: 'must match pattern "^A-"' },
        { path: "amount", message: "must be <= 100" }, // through a local $ref
        { path: "tags", message: "must NOT have more than 1 item" },
        { path: "tags.0", message: 'must be one of "a", "b"' },
        { path: "kind", message: "must match a schema in anyOf" }, // not each alternative's error
        { path: "(root)", message: 'must not have the property "x"' },
      ]),
    );
    expect(issues).toHaveLength(7);
  });

  it("accepts what conforms", () => {
    expect(checker(refund)({ orderId: "A-1", amount: 5, reason: "late" })).toEqual([]);
  });

  it("follows the draft the schema declares: 2020-12 prefixItems, draft-07 tuple items", () => {
    const modern = checker({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "array",
      prefixItems: [{ type: "string" }, { type: "integer" }],
    });
    expect(modern(["a", 1])).toEqual([]);
    expect(modern(["a", "b"])).toEqual([{ path: "1", message: "must be integer" }]);
    const draft7 = checker({
      $schema: "http://json-schema.org/draft-07/schema#",
      type: "array",
      items: [{ type: "string" }, { type: "integer" }],
    });
    expect(draft7(["a", 1.5])).toEqual([{ path: "1", message: "must be integer" }]);
  });

  it("never compiles code: it works with eval and the Function constructor gone", () => {
    const { eval: savedEval, Function: savedFunction } = globalThis;
    const refuse = () => {
      throw new EvalError("Refused to evaluate a string as JavaScript ('unsafe-eval')");
    };
    Object.assign(globalThis, { eval: refuse, Function: refuse });
    try {
      expect(checker(refund)({ orderId: "A-1", amount: 500, reason: "x" })).toEqual([
        { path: "amount", message: "must be <= 100" },
      ]);
    } finally {
      Object.assign(globalThis, { eval: savedEval, Function: savedFunction });
    }
  });
});
