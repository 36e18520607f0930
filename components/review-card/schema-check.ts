import { Validator, type OutputUnit, type Schema, type SchemaDraft } from "@cfworker/json-schema";

// Live feedback for edits against the tool's JSON Schema; the server validates again on submit.
// @cfworker/json-schema interprets the schema instead of compiling it to code: Ajv's compiler
// needs `new Function`, which would force 'unsafe-eval' into the Content-Security-Policy of every
// page that shows a card (ours and each host's). Messages are phrased like the server's (Ajv's),
// so the card and the API's 400 answer say the same thing.

export type SchemaIssue = { path: string; message: string };

export type SchemaCheck =
  { usable: true; check: (value: unknown) => SchemaIssue[] } | { usable: false; problem: string };

/** The draft a schema declares; without one, draft-07, which the server's Ajv applies. */
function draftOf(schema: Record<string, unknown>): SchemaDraft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("2020-12")) return "2020-12";
  if (declared.includes("2019-09")) return "2019-09";
  if (declared.includes("draft-04")) return "4";
  return "7";
}

export function compileSchema(schema: Record<string, unknown>): SchemaCheck {
  let validator: Validator;
  try {
    // shortCircuit off: every problem at once, as the server lists them.
    validator = new Validator(schema as Schema, draftOf(schema), false);
  } catch (error) {
    return { usable: false, problem: error instanceof Error ? error.message : String(error) };
  }
  return {
    usable: true,
    check: (value) => {
      let errors: OutputUnit[];
      try {
        errors = validator.validate(value).errors;
      } catch {
        // A reference this checker cannot follow: it must not block an edit the server accepts.
        return [];
      }
      const rejectedExtras = new Set(
        errors
          .filter((error) => error.keyword === "additionalProperties")
          .map((error) => error.instanceLocation),
      );
      return leafErrors(errors).map((error) => toIssue(error, schema, rejectedExtras));
    },
  };
}

/**
 * Keywords whose error only says "something below failed": the errors below say what. Errors
 * under a failed anyOf/oneOf/not are each alternative's, not the instance's: the combinator's own
 * error speaks for them.
 */
const WRAPPERS = new Set([
  "properties",
  "patternProperties",
  "additionalProperties",
  "unevaluatedProperties",
  "propertyNames",
  "dependentSchemas",
  "items",
  "prefixItems",
  "additionalItems",
  "unevaluatedItems",
  "allOf",
  "$ref",
  "$recursiveRef",
  "if",
  "then",
  "else",
]);
const COMBINATORS = new Set(["anyOf", "oneOf", "not"]);

function leafErrors(errors: OutputUnit[]): OutputUnit[] {
  const combinators = errors
    .filter((error) => COMBINATORS.has(error.keyword))
    .map((error) => `${error.keywordLocation}/`);
  const seen = new Set<string>();
  return errors.filter((error) => {
    if (WRAPPERS.has(error.keyword)) return false;
    if (combinators.some((prefix) => error.keywordLocation.startsWith(prefix))) return false;
    const key = `${error.instanceLocation} ${error.keywordLocation}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** `#/items/0/name` → ["items", "0", "name"] (JSON Pointer segments, unescaped). */
function pointerSegments(location: string): string[] {
  const pointer = location.replace(/^#\/?/, "");
  if (pointer === "") return [];
  return pointer
    .split("/")
    .map((segment) => decodeURIComponent(segment).replaceAll("~1", "/").replaceAll("~0", "~"));
}

/**
 * The value at a keyword location, following local `$ref`s ("#/$defs/x") on the way; undefined
 * when the path leaves the document (a remote reference).
 */
function valueAt(root: unknown, keywordLocation: string): unknown {
  let node: unknown = root;
  for (const segment of pointerSegments(keywordLocation)) {
    if (node === null || typeof node !== "object") return undefined;
    if (segment === "$ref" || segment === "$recursiveRef") {
      const ref = (node as Record<string, unknown>)[segment];
      if (typeof ref !== "string" || !ref.startsWith("#")) return undefined;
      node = valueAt(root, ref);
      continue;
    }
    node = (node as Record<string, unknown>)[segment];
  }
  return node;
}

/**
 * One error in the server's terms. `rejectedExtras`: the objects (instance locations) whose
 * additionalProperties failed.
 */
function toIssue(
  error: OutputUnit,
  schema: Record<string, unknown>,
  rejectedExtras: Set<string>,
): SchemaIssue {
  const segments = pointerSegments(error.instanceLocation);
  // `additionalProperties: false` fails the extra property itself against the `false` schema:
  // reported, as Ajv does, on the object that has it.
  const parent = error.instanceLocation.slice(0, error.instanceLocation.lastIndexOf("/"));
  if (error.keyword === "false" && rejectedExtras.has(parent)) {
    const property = segments.pop();
    return { path: pathText(segments), message: `must not have the property "${property}"` };
  }
  if (error.keyword === "required") {
    const missing = /required property "(.*)"/.exec(error.error)?.[1];
    if (missing !== undefined) {
      return { path: pathText(segments), message: `must have required property "${missing}"` };
    }
  }
  const message = messageFor(error.keyword, valueAt(schema, error.keywordLocation));
  return { path: pathText(segments), message: message ?? error.error.replace(/\.$/, "") };
}

function pathText(segments: string[]): string {
  return segments.length > 0 ? segments.join(".") : "(root)";
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;

/** Ajv's wording for the common keywords; null for the rest (the validator's own then). */
function messageFor(keyword: string, expected: unknown): string | null {
  const number = typeof expected === "number" ? expected : null;
  switch (keyword) {
    case "type":
      return `must be ${Array.isArray(expected) ? expected.join(",") : String(expected)}`;
    case "enum":
      return Array.isArray(expected)
        ? `must be one of ${expected.map((v) => JSON.stringify(v)).join(", ")}`
        : null;
    case "const":
      return `must be equal to ${JSON.stringify(expected)}`;
    case "maximum":
      return number === null ? null : `must be <= ${number}`;
    case "minimum":
      return number === null ? null : `must be >= ${number}`;
    case "exclusiveMaximum":
      return number === null ? null : `must be < ${number}`;
    case "exclusiveMinimum":
      return number === null ? null : `must be > ${number}`;
    case "multipleOf":
      return number === null ? null : `must be multiple of ${number}`;
    case "maxLength":
      return number === null ? null : `must NOT have more than ${plural(number, "character")}`;
    case "minLength":
      return number === null ? null : `must NOT have fewer than ${plural(number, "character")}`;
    case "maxItems":
      return number === null ? null : `must NOT have more than ${plural(number, "item")}`;
    case "minItems":
      return number === null ? null : `must NOT have fewer than ${plural(number, "item")}`;
    case "pattern":
      return typeof expected === "string" ? `must match pattern "${expected}"` : null;
    case "format":
      return typeof expected === "string" ? `must match format "${expected}"` : null;
    case "anyOf":
      return "must match a schema in anyOf";
    case "oneOf":
      return "must match exactly one schema in oneOf";
    case "not":
      return "must NOT be valid against the schema in not";
    default:
      return null;
  }
}
