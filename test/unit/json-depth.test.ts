import { describe, expect, it } from "vitest";
import { InvalidRequestError } from "@/lib/errors";
import { assertJsonDepth, jsonTextTooDeep, MAX_JSON_DEPTH } from "@/lib/http/json-depth";

// Finding 6 of issue 14: the checks that keep deep JSON from overflowing the stack must not
// recurse themselves, so they are run here far past any stack's depth.

const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("jsonTextTooDeep", () => {
  it("counts objects and arrays, the outermost as level 1", () => {
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonTextTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(jsonTextTooDeep(`${'{"a":'.repeat(300)}1${"}".repeat(300)}`)).toBe(true);
    expect(jsonTextTooDeep(`[${nested(10)},${nested(10)}]`, 11)).toBe(false);
  });

  it("skips brackets inside strings, escaped quotes included", () => {
    expect(jsonTextTooDeep(JSON.stringify({ a: "[".repeat(1_000) }))).toBe(false);
    expect(jsonTextTooDeep(JSON.stringify({ a: '\\"[[[[' }), 2)).toBe(false);
  });

  it("scans a million levels without recursion", () => {
    expect(jsonTextTooDeep(nested(1_000_000))).toBe(true);
  });
});

describe("assertJsonDepth", () => {
  it("throws 400 invalid_request past the limit, naming the path", () => {
    let value: unknown = 1;
    for (let i = 0; i < 100_000; i++) value = { a: value };
    try {
      assertJsonDepth(value, "decision");
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as InvalidRequestError).toJSON().error.issues).toEqual([
        { path: "decision", message: `nested deeper than ${MAX_JSON_DEPTH} levels` },
      ]);
    }
  });

  it("accepts the limit itself, and shared references", () => {
    let value: unknown = [];
    for (let i = 1; i < MAX_JSON_DEPTH; i++) value = [value];
    expect(() => assertJsonDepth(value)).not.toThrow();
    const shared = { x: 1 };
    expect(() => assertJsonDepth({ a: shared, b: shared })).not.toThrow();
  });

  it("counts a shared object at its deepest place, and ends a cycle", () => {
    // A chain of 1,000 whose every link the root also holds: reached shallow first, deep later.
    const links: { next?: unknown }[] = Array.from({ length: 1_000 }, () => ({}));
    links.forEach((link, i) => (link.next = links[i + 1] ?? null));
    expect(() => assertJsonDepth(links)).toThrow(InvalidRequestError);
    const cycle: { self?: unknown } = {};
    cycle.self = cycle;
    expect(() => assertJsonDepth(cycle)).toThrow(InvalidRequestError);
  });
});
