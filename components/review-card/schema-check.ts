import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";

// Live feedback for edits against the tool's JSON Schema; the server validates again on submit.
// A fresh Ajv per schema: schemas come from agents, and a shared instance would refuse a second
// schema that reuses another's `$id`.

export type SchemaIssue = { path: string; message: string };

export type SchemaCheck =
  { usable: true; check: (value: unknown) => SchemaIssue[] } | { usable: false; problem: string };

export function compileSchema(schema: Record<string, unknown>): SchemaCheck {
  let validate: ValidateFunction;
  try {
    validate = new Ajv({ strict: false, allErrors: true }).compile(schema);
  } catch (error) {
    return { usable: false, problem: error instanceof Error ? error.message : String(error) };
  }
  return {
    usable: true,
    check: (value) => (validate(value) ? [] : (validate.errors ?? []).map(toIssue)),
  };
}

function toIssue(error: ErrorObject): SchemaIssue {
  const path = error.instancePath ? error.instancePath.slice(1).replaceAll("/", ".") : "(root)";
  const params = error.params as Record<string, unknown>;
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    return { path, message: `must not have the property "${params.additionalProperty}"` };
  }
  if (error.keyword === "enum" && Array.isArray(params.allowedValues)) {
    const allowed = params.allowedValues.map((v) => JSON.stringify(v)).join(", ");
    return { path, message: `must be one of ${allowed}` };
  }
  return { path, message: error.message ?? "is invalid" };
}
