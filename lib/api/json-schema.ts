import { Ajv, type ValidateFunction } from "ajv";

// Tool calls may carry a JSON Schema of their args; reviewers' edits are checked against it.
const ajv = new Ajv({ allErrors: true, strict: false, validateSchema: true });
const compiled = new Map<string, ValidateFunction>();

function compile(schema: Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, validate);
  }
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
