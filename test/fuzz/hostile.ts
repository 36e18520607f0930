import fc from "fast-check";

// Hostile inputs for the API fuzzer: JSON values, raw bodies, headers, query strings and path ids
// that a careless or malicious client could send. Everything here must be sendable by `fetch`
// (header values are ByteStrings without CR/LF/NUL), so the server, not the client, is what refuses.

/** Strings that have broken parsers, validators and SQL before. */
const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\u0007\u001b[31m",
  "\r\n\r\n",
  "\uFEFF",
  "\uD800",
  "\uDFFF\uD800",
  "\u202E\u2066",
  "𝕳𝖊𝖑𝖑𝖔",
  "👩‍👩‍👧‍👦",
  "e\u0301\u0301\u0301",
  "NaN",
  "Infinity",
  "-0",
  "1e309",
  "-1e309",
  "0x10",
  "9007199254740993",
  "null",
  "true",
  "undefined",
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "' OR 1=1 --",
  '"; DROP TABLE runs; --',
  "%s%s%s%n",
  "${7*7}{{7*7}}",
  "<script>alert(1)</script>",
  "../../../../etc/passwd",
  "approve",
  "reject",
  "edit",
  "once",
  "run",
  "conversation",
  "completed",
  "failed",
  "tool.completed",
  "pending",
  "all",
  "admin",
  "lead",
];

/** Keys that tempt prototype pollution or collide with object internals. */
const NASTY_KEYS = ["__proto__", "constructor", "prototype", "hasOwnProperty", "toJSON", "valueOf"];

const NASTY_NUMBERS = [
  0,
  -0,
  -1,
  1,
  0.5,
  2 ** 31,
  2 ** 53 + 1,
  Number.MAX_SAFE_INTEGER,
  -Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  1e21,
  3600,
  3601,
  5,
  4,
  60,
  61,
];

export const nastyString = fc.oneof(
  fc.constantFrom(...NASTY_STRINGS),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.string({ maxLength: 2000 }),
);

const nastyScalar = fc.oneof(
  nastyString,
  fc.constantFrom(...NASTY_NUMBERS),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
);

/** A JSON value of any shape, with hostile keys and scalars at every level. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    nastyScalar,
    tie("array"),
    tie("object"),
  ),
  array: fc.array(tie("value"), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(fc.constantFrom(...NASTY_KEYS), nastyString), tie("value"), {
    maxKeys: 5,
  }),
})).value;

/**
 * An object built from the operation's own field names (so validation gets past "unknown shape"
 * and reaches each field), with hostile values, plus the odd prototype-pollution key.
 */
export function hostileObject(fieldNames: string[]): fc.Arbitrary<Record<string, unknown>> {
  const keys = fieldNames.length > 0 ? fieldNames : ["x"];
  return fc
    .tuple(
      fc.dictionary(fc.constantFrom(...keys), hostileJson, { maxKeys: keys.length }),
      fc.option(fc.tuple(fc.constantFrom(...NASTY_KEYS), hostileJson), { freq: 3 }),
    )
    .map(([fields, extra]) => {
      if (!extra) return fields;
      // JSON.stringify keeps an own `__proto__` key only when it is defined this way.
      return Object.defineProperty({ ...fields }, extra[0], {
        value: extra[1],
        enumerable: true,
        configurable: true,
        writable: true,
      });
    });
}

/** Nested arrays or objects `depth` deep: parsers and recursive validators must not blow the stack. */
export const deepNesting = fc
  .tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    arrays
      ? "[".repeat(depth) + "]".repeat(depth)
      : '{"a":'.repeat(depth) + "1" + "}".repeat(depth),
  );

/** Bodies that are not JSON at all, or broken JSON. */
export const brokenJsonText = fc.oneof(
  fc.constantFrom(
    "",
    "{",
    "}",
    "[",
    '{"a":',
    '{"a":1,}',
    "{'a':1}",
    "NaN",
    "Infinity",
    "undefined",
    "\uFEFF{}",
    "{}\u0000",
    '{"a":"\u0000"}',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"a":1e309}',
    '{"a":-0}',
    '{"a":1}{"b":2}',
    "null",
    "[]",
    '"string"',
    "12",
    "true",
    "a=1&b=2",
    "<xml/>",
  ),
  fc.string({ unit: "binary", maxLength: 200 }),
  deepNesting,
);

/** Content types the contract must refuse with 415 (or accept, when they really are JSON). */
export const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "APPLICATION/JSON",
  "application/json;charset=utf-16",
  "application/jsonx",
  "application/json-patch+json",
  "application/vnd.api+json",
  "text/plain",
  "text/json",
  "application/x-www-form-urlencoded",
  "multipart/form-data; boundary=x",
  "application/xml",
  "application/octet-stream",
  "*/*",
  "",
  ";",
  "application/",
);

/** Header values fetch will send: Latin-1 without CR, LF or NUL. */
export const headerValue = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "-1",
    "0",
    "NaN",
    "1e309",
    "99999999999999999999999999",
    "0x1F",
    "null",
    "\t",
    "a\tb",
    "ÿþ",
    "%00",
    "../../",
  ),
  fc.string({ maxLength: 300 }).map((s) => s.replace(/[\r\n\0]/g, "")),
  fc
    .integer({ min: 256, max: 1_000 })
    .chain((n) => fc.constantFrom("k", "é", "9", "-").map((c) => c.repeat(n))),
);

/** One header near Node's 16 KiB limit for all of them (beyond it Node answers 431 itself). */
export const hugeHeaderValue = fc
  .integer({ min: 1_000, max: 9_000 })
  .chain((n) => fc.constantFrom("k", "é", "9", "-").map((c) => c.repeat(n)));

/** Query-string names the endpoints read, plus ones they do not. */
const QUERY_NAMES = [
  "wait",
  "queue",
  "status",
  "limit",
  "cursor",
  "lastEventId",
  "from",
  "to",
  "q",
  "format",
  "__proto__",
  "constructor",
  "queue[]",
  "wait[0]",
  "a[b][c]",
];

const queryValue = fc.oneof(
  fc.constantFrom(
    "-1",
    "1e9",
    "1e309",
    "NaN",
    "0",
    "-0",
    "0x10",
    "",
    "61",
    "Infinity",
    "%",
    "%ZZ",
    "%00",
    "%E0%A4%A",
    "%C0%AF",
    "%FF%FE",
    "null",
    "[]",
    "{}",
    "pending",
    "all",
    "decided",
    "9".repeat(400),
  ),
  fc.string({ maxLength: 60 }).map(encodeURIComponent),
);

/**
 * A query string of hostile pairs, repeated keys and broken percent-encoding. `wait` values that
 * would legitimately hold the request (1–60 s) are kept out, so the fuzzer does not sit in long polls.
 */
export function hostileQuery(names: string[]): fc.Arbitrary<string> {
  const allNames = [...new Set([...names, ...QUERY_NAMES])];
  return fc
    .array(fc.tuple(fc.constantFrom(...allNames), queryValue), { maxLength: 6 })
    .map((pairs) =>
      pairs
        .filter(([name, value]) => !(name === "wait" && /^[1-9]\d?$/.test(value)))
        .map(([name, value]) => `${encodeURIComponent(name)}=${value}`)
        .join("&"),
    );
}

/** Path segments whose percent-encoding does not decode (kept apart: see the fuzzer's own test). */
export const MALFORMED_ENCODINGS = ["%", "%ZZ", "a%", "%E0%A4%A", "%C0%AF", "%FF"];

/** Path ids that are not ids, percent-encoded so that the path keeps its shape. */
export const garbageId = fc.oneof(
  fc.constantFrom(
    "00000000-0000-7000-8000-000000000000",
    "0",
    "-1",
    "null",
    "undefined",
    "__proto__",
    "constructor",
    "%2F",
    "%00",
    "' OR 1=1 --",
    "x".repeat(2_000),
  ),
  fc.string({ minLength: 1, maxLength: 80 }).map(encodeURIComponent),
);

/** A well-formed string with no control characters (any script, emoji, combining marks). */
const cleanText = fc
  .string({ unit: "grapheme", maxLength: 20 })
  .map((s) => s.replace(/[\u0000-\u001f\u007f-\u009f]/g, ""));

/** `bad` put into a clean string between two code points. */
const splicedInto = (bad: fc.Arbitrary<string>) =>
  fc.tuple(cleanText, bad, fc.nat()).map(([text, inner, at]) => {
    const points = Array.from(text);
    const cut = at % (points.length + 1);
    return [...points.slice(0, cut), inner, ...points.slice(cut)].join("");
  });

/**
 * A text no stored text may hold (issue 24): a control character that even multi-line text
 * refuses (C0 but tab, line feed and carriage return; DEL; C1), or an unpaired surrogate.
 */
export const unstorableText: fc.Arbitrary<{ text: string; kind: "control" | "surrogate" }> =
  fc.oneof(
    splicedInto(
      fc
        .oneof(fc.integer({ min: 0, max: 0x1f }), fc.integer({ min: 0x7f, max: 0x9f }))
        .filter((c) => c !== 0x09 && c !== 0x0a && c !== 0x0d)
        .map((c) => String.fromCharCode(c)),
    ).map((text) => ({ text, kind: "control" as const })),
    splicedInto(fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c))).map(
      (text) => ({ text, kind: "surrogate" as const }),
    ),
  );
