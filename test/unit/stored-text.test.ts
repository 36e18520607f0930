import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { JsonValue } from "@/lib/input/json-value";
import { parseInput } from "@/lib/input/parse";
import { InvalidRequestError } from "@/lib/errors";
import { plainIssueMessage } from "@/lib/forms/plain-issues";
import {
  assertWellFormedText,
  CONTROL_CHARACTERS_MESSAGE,
  ILL_FORMED_MESSAGE,
  illFormedTextPath,
  LINE_BREAK_MESSAGE,
  MultiLineText,
  SingleLineText,
  storableName,
} from "@/lib/text/stored-text";

// Issue 24 hole 6: the one schema every stored text goes through refuses control characters and
// unpaired surrogates, and keeps every other string as it was (the properties below), so that
// what SQLite stores and a strict JSON parser reads back is exactly what was sent.

const C0 = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));
const C1_OR_DEL = fc.integer({ min: 0x7f, max: 0x9f }).map((c) => String.fromCharCode(c));
const WHITESPACE_CONTROL = fc.constantFrom("\t", "\n", "\r");
const FORBIDDEN_IN_TEXT = fc.oneof(C0, C1_OR_DEL).filter((c) => !"\t\n\r".includes(c));
const LONE_SURROGATE = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

/** Any well-formed string without control characters: letters, emoji, combining marks, bidi. */
const cleanText = fc
  .oneof(
    fc.string({ unit: "grapheme", maxLength: 30 }),
    fc.string({ unit: "grapheme-composite", maxLength: 30 }),
    fc.string({ maxLength: 30 }),
  )
  .map((s) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ""));

/** `inner` put into `text` between two code points (never between a surrogate pair's halves). */
const spliced = (inner: fc.Arbitrary<string>) =>
  fc.tuple(cleanText, inner, fc.nat()).map(([text, bad, at]) => {
    const points = Array.from(text);
    const cut = at % (points.length + 1);
    return [...points.slice(0, cut), bad, ...points.slice(cut)].join("");
  });

const messageOf = (schema: z.ZodType, value: unknown) =>
  schema.safeParse(value).error?.issues.map((i) => i.message);

describe("SingleLineText and MultiLineText", () => {
  it("keep every well-formed string without control characters, unchanged", () => {
    fc.assert(
      fc.property(cleanText, (text) => {
        expect(SingleLineText.parse(text)).toBe(text);
        expect(MultiLineText.parse(text)).toBe(text);
      }),
      { numRuns: 500 },
    );
  });

  it("refuse every C0 and C1 control character and DEL, wherever it is", () => {
    fc.assert(
      fc.property(spliced(FORBIDDEN_IN_TEXT), (text) => {
        expect(messageOf(SingleLineText, text)).toEqual([CONTROL_CHARACTERS_MESSAGE]);
        expect(messageOf(MultiLineText, text)).toEqual([CONTROL_CHARACTERS_MESSAGE]);
      }),
      { numRuns: 500 },
    );
  });

  it("a single line refuses tab, line feed and carriage return; multi-line text keeps them", () => {
    fc.assert(
      fc.property(spliced(WHITESPACE_CONTROL), (text) => {
        expect(messageOf(SingleLineText, text)).toEqual([LINE_BREAK_MESSAGE]);
        expect(MultiLineText.parse(text)).toBe(text);
      }),
    );
  });

  it("refuse an unpaired surrogate, high or low, and keep pairs (astral characters)", () => {
    fc.assert(
      // One surrogate code unit anywhere in well-formed text leaves an odd number of halves: one
      // of them is unpaired wherever it lands, even between the halves of a pair.
      fc.property(fc.tuple(cleanText, LONE_SURROGATE, fc.nat()), ([text, lone, at]) => {
        const cut = at % (text.length + 1);
        const withLone = text.slice(0, cut) + lone + text.slice(cut);
        expect(messageOf(SingleLineText, withLone)).toEqual([ILL_FORMED_MESSAGE]);
        expect(messageOf(MultiLineText, withLone)).toEqual([ILL_FORMED_MESSAGE]);
      }),
      { numRuns: 500 },
    );
    expect(MultiLineText.parse("\ud83d\ude00 ok")).toBe("😀 ok");
  });

  it("still chain as z.string() does, and the check comes before .trim()", () => {
    const Name = SingleLineText.trim().min(1).max(5);
    expect(Name.parse("  Dana ")).toBe("Dana");
    expect(messageOf(Name, "Dana\n")).toEqual([LINE_BREAK_MESSAGE]);
    expect(messageOf(Name, "")?.[0]).toMatch(/Too small/);
  });

  it("the 400 names the field (as the API contract's issues), and forms word it as a sentence", () => {
    const Body = z.strictObject({
      name: SingleLineText,
      plan: z.object({ risks: z.array(MultiLineText) }),
    });
    let error: unknown;
    try {
      parseInput(Body, { name: "a\u0000b", plan: { risks: ["ok", "x\ud800"] } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as InvalidRequestError).toJSON().error).toMatchObject({
      code: "invalid_request",
      issues: [
        { path: "name", message: CONTROL_CHARACTERS_MESSAGE },
        { path: "plan.risks.1", message: ILL_FORMED_MESSAGE },
      ],
    });
    const [detail] = (error as InvalidRequestError).details;
    expect(plainIssueMessage(detail!)).toBe("Must not contain control characters.");
  });
});

describe("storableName: an identity provider's name, which cannot be refused, made storable", () => {
  it("always passes SingleLineText, and keeps a clean single-word name as it is", () => {
    const anyName = fc.oneof(
      spliced(FORBIDDEN_IN_TEXT),
      spliced(LONE_SURROGATE),
      spliced(WHITESPACE_CONTROL),
      cleanText,
    );
    fc.assert(
      fc.property(anyName, (name) => {
        expect(SingleLineText.max(100).safeParse(storableName(name)).success).toBe(true);
      }),
    );
    expect(storableName("Dana\u0000 Evil\ud800\n Name")).toBe("Dana Evil Name");
    expect(storableName("Ada Lovelace")).toBe("Ada Lovelace");
    expect(storableName("\u0000\u001b")).toBe("");
  });
});

describe("illFormedTextPath: JSON data keeps control characters, not lone surrogates", () => {
  it("finds the first unpaired surrogate in any value or key, and its path", () => {
    expect(illFormedTextPath({ a: [1, { b: "x\udc00" }] })).toBe("a.1.b");
    expect(illFormedTextPath({ ["k\ud800"]: 1 })).toBe("k\ud800");
    expect(illFormedTextPath("\ud800")).toBe("(body)");
    expect(illFormedTextPath({ note: "a\u0000b\u001b[31m", emoji: "👩‍👩‍👧‍👦" })).toBeNull();
  });

  it("answers null exactly for values that survive a UTF-8 round trip", () => {
    fc.assert(
      fc.property(
        // binary: any UTF-16 code unit, so lone halves in keys and values alike
        fc.oneof(fc.jsonValue({ stringUnit: "binary" }), fc.jsonValue({ stringUnit: "grapheme" })),
        (value) => {
          const text = JSON.stringify(value);
          const roundTripped = new TextDecoder().decode(new TextEncoder().encode(text));
          expect(illFormedTextPath(value) === null).toBe(roundTripped === text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("assertWellFormedText throws the contract's 400 with the path under a prefix", () => {
    expect(() => assertWellFormedText({ editedArgs: { x: "\udfff" } }, "decision")).toThrow(
      expect.objectContaining({
        status: 400,
        extra: { issues: [{ path: "decision.editedArgs.x", message: ILL_FORMED_MESSAGE }] },
      }),
    );
    expect(() => assertWellFormedText({ x: "\t\u0000" })).not.toThrow();
  });

  it("JsonValue (a policy predicate's value, from a server action too) refuses them alike", () => {
    expect(JsonValue.safeParse({ a: ["x\ud800"] }).error?.issues).toMatchObject([
      { path: ["a", 0], message: ILL_FORMED_MESSAGE },
    ]);
    expect(JsonValue.safeParse({ ["k\udc00"]: 1 }).success).toBe(false);
    expect(JsonValue.parse({ note: "a\u0000\u001b" })).toEqual({ note: "a\u0000\u001b" });
  });
});
