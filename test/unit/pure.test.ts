import { describe, expect, it } from "vitest";
import { z } from "zod";
import { actionHash } from "@/lib/batches/action-hash";
import { formatAgo } from "@/lib/time/format";
import { parseInput } from "@/lib/input/parse";
import { schemaProblem, schemaViolations } from "@/lib/input/json-schema";
import { InvalidRequestError } from "@/lib/errors";
import { retryDelayMs } from "@/lib/webhooks/deliver-webhooks";

describe("actionHash", () => {
  it("ignores key order and whitespace (RFC 8785 canonical JSON)", () => {
    const a = actionHash("refund", { orderId: "A-1", amount: 25, meta: { b: 1, a: [1, 2] } });
    const b = actionHash(
      "refund",
      JSON.parse('{ "meta": {"a":[1, 2],"b":1}, "amount":25,  "orderId":"A-1" }'),
    );
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });

  it("changes with any value, array order or the tool name", () => {
    const base = actionHash("refund", { orderId: "A-1", amount: 25 });
    expect(actionHash("refund", { orderId: "A-1", amount: 26 })).not.toBe(base);
    expect(actionHash("refund", { orderId: "A-1", amount: "25" })).not.toBe(base);
    expect(actionHash("refund_v2", { orderId: "A-1", amount: 25 })).not.toBe(base);
    expect(actionHash("t", { list: [1, 2] })).not.toBe(actionHash("t", { list: [2, 1] }));
  });
});

describe("formatAgo", () => {
  const now = 1_000_000_000;
  it.each([
    [4_000, "4 s ago"],
    [89_000, "89 s ago"],
    [10 * 60_000, "10 min ago"],
    [5 * 3600_000, "5 h ago"],
    [3 * 86400_000, "3 d ago"],
  ])("%i ms → %s", (elapsed, text) => expect(formatAgo(now - elapsed, now)).toBe(text));
});

describe("parseInput", () => {
  const Schema = z.object({ name: z.string(), count: z.int().min(1) });
  it("returns the parsed value", () => {
    expect(parseInput(Schema, { name: "a", count: 2 })).toEqual({ name: "a", count: 2 });
  });
  it("throws 400 invalid_request listing every issue with its path", () => {
    try {
      parseInput(Schema, { name: 3, count: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidRequestError);
      const body = (error as InvalidRequestError).toJSON().error;
      expect(body.code).toBe("invalid_request");
      expect((body.issues as { path: string }[]).map((i) => i.path).sort()).toEqual([
        "count",
        "name",
      ]);
    }
  });
});

describe("JSON Schema checks for edited args", () => {
  const schema = {
    type: "object",
    properties: { amount: { type: "number", maximum: 100 } },
    required: ["amount"],
    additionalProperties: false,
  };
  it("accepts conforming args and lists violations with paths", () => {
    expect(schemaViolations(schema, { amount: 20 })).toEqual([]);
    expect(schemaViolations(schema, { amount: 500 })[0]).toMatchObject({ path: "amount" });
    expect(schemaViolations(schema, {}).length).toBeGreaterThan(0);
  });
  it("recognizes a schema that is not one", () => {
    expect(schemaProblem(schema)).toBeNull();
    expect(schemaProblem({ type: "no-such-type" })).not.toBeNull();
  });
});

describe("webhook retry delay", () => {
  it("doubles per attempt and is capped at an hour", () => {
    expect(retryDelayMs(1)).toBe(1000);
    expect(retryDelayMs(2)).toBe(2000);
    expect(retryDelayMs(5)).toBe(16000);
    expect(retryDelayMs(40)).toBe(3600_000);
  });
});
