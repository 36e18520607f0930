import { Ajv, type ValidateFunction } from "ajv";

// Tool calls may carry a JSON Schema of their args; reviewers' edits are checked against it.
// Schemas come from agents, so each is compiled by its own Ajv: one shared instance would keep
// every schema forever and refuse a second schema reusing another's `$id`.

const MAX_CACHED = 500;
const compiled = new Map<string, ValidateFunction>();

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (validate) {
    compiled.delete(key); // re-insert: the map's order is least recently used first
  } else {
    validate = new Ajv({ allErrors: true, strict: false, validateSchema: true }).compile(schema);
    if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  }
  compiled.set(key, validate);
  return validate;
}

/** Null when `schema` is a usable JSON Schema, else why not. */
export function schemaProblem(schema: Record<string, unknown>): string | null {
  try {
    compile(schema);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : "not a valid JSON Schema";
  }
}

/** The ways `value` breaks `schema`, as `{ path, message }` (empty when it conforms). */
export function schemaViolations(
  schema: Record<string, unknown>,
  value: unknown,
): { path: string; message: string }[] {
  const validate = compile(schema);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => ({
    path: e.instancePath ? e.instancePath.slice(1).replaceAll("/", ".") : "(root)",
    message: e.message ?? "is invalid",
  }));
}
