import {
  type Contract,
  ENUM_NAMES,
  enumName,
  isMap,
  type JsonSchema,
  SHARED_SHAPES,
  shapeKey,
  splitNull,
} from "./contract-types";

// The Python package's contract module: the error codes as a Literal and the tuple of its values
// (read from it with `get_args`, so each code is written once), each resource and request body as
// a TypedDict. Written the way `ruff format` leaves it (the package's tests run `ruff format
// --check`): one field a line, a Literal longer than the line exploded one item a line with a
// trailing comma.

const LINE = 100;

/** Inline objects whose Python name is not their owner's plus the field's. */
const INLINE_NAMES: Record<string, string> = {
  "ClaimGrant.rollback": "RollbackAction",
  "Vote.reviewer": "DeciderRef",
  "ErrorResponse.error": "ErrorBody",
  "ErrorBody.issues": "Issue",
};

export function pythonContract(contract: Contract, header: string): string {
  const named = new Map<string, string>();
  for (const shared of SHARED_SHAPES) named.set(shapeKey(shared.schema), shared.name);
  for (const type of contract.types) named.set(shapeKey(type.schema), type.name);
  /** the TypedDicts, each after the ones its fields name */
  const classes: string[] = [];

  const typeOf = (schema: JsonSchema, owner: string): string => {
    if (schema.$ref) {
      const name = contract.refNames.get(schema.$ref);
      if (!name) throw new Error(`No name for ${schema.$ref}.`);
      return name;
    }
    const { schema: inner, nullable } = splitNull(schema);
    if (nullable) return `${typeOf(inner, owner)} | None`;
    const name = named.get(shapeKey(schema));
    if (name) return name;
    if (schema.const !== undefined) return `Literal[${JSON.stringify(schema.const)}]`;
    if (schema.enum) return enumName(schema) ?? literal(schema.enum);
    const options = schema.anyOf ?? schema.oneOf;
    if (options) return options.map((option) => typeOf(option, owner)).join(" | ");
    if (Array.isArray(schema.type)) {
      return schema.type.map((type) => typeOf({ ...schema, type }, owner)).join(" | ");
    }
    switch (schema.type) {
      case "string":
        return "str";
      case "integer":
        return "int";
      case "number":
        return "float";
      case "boolean":
        return "bool";
      case "array":
        return `list[${typeOf(schema.items ?? {}, owner)}]`;
      case "object": {
        if (isMap(schema)) return "dict[str, Any]";
        const className =
          INLINE_NAMES[owner] ?? owner.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());
        named.set(shapeKey(schema), className);
        classes.push(typedDict(className, schema, undefined));
        return className;
      }
      case undefined:
        return "Any";
      default:
        throw new Error(`No Python type for JSON Schema type ${schema.type}.`);
    }
  };

  const typedDict = (name: string, schema: JsonSchema, description: string | undefined): string => {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties ?? {}).map(([field, value]) => {
      if (!/^[A-Za-z_]\w*$/.test(field)) throw new Error(`${name}.${field} is not a Python name.`);
      const type = typeOf(value, `${name}.${field}`);
      const line = `    ${field}: ${required.has(field) ? type : `NotRequired[${type}]`}`;
      return `${comment(value.description, "    ")}${line}`;
    });
    const docstring = description ? `    """${description}"""\n\n` : "";
    return `class ${name}(TypedDict):\n${docstring}${fields.join("\n") || "    pass"}\n`;
  };

  const aliases = Object.entries(ENUM_NAMES).map(
    ([values, name]) => `${name} = ${literal(values.split(","), name.length + 3)}`,
  );
  for (const shared of SHARED_SHAPES)
    classes.push(typedDict(shared.name, shared.schema, undefined));
  for (const type of contract.types) {
    classes.push(typedDict(type.name, type.schema, type.schema.description));
  }
  return [
    `"""${header}"""`,
    "",
    "from __future__ import annotations",
    "",
    "from typing import Any, Literal, TypedDict, get_args",
    "",
    "from typing_extensions import NotRequired",
    "",
    "#: the API contract's error codes",
    `ApiErrorCode = ${literal(contract.errorCodes, "ApiErrorCode = ".length)}`,
    "#: every ``error.code`` the API answers with (the server's lib/errors.ts), in its order",
    "API_ERROR_CODES: tuple[ApiErrorCode, ...] = get_args(ApiErrorCode)",
    "",
    ...aliases,
    ...classes.flatMap((text) => ["", "", text.trimEnd()]),
    "",
  ].join("\n");
}

/** `Literal[…]` on one line when it fits after `indent` characters, else one value a line. */
function literal(values: readonly unknown[], indent = 4 + 30): string {
  const quoted = values.map((value) => JSON.stringify(value));
  const flat = `Literal[${quoted.join(", ")}]`;
  if (indent + flat.length <= LINE) return flat;
  return `Literal[\n${quoted.map((value) => `    ${value},\n`).join("")}]`;
}

function comment(description: string | undefined, indent: string): string {
  return description ? `${indent}#: ${description.replaceAll("\n", " ")}\n` : "";
}
