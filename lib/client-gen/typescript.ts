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

// The TypeScript SDK's contract file: the error codes as a const array and union, and each
// resource and request body as a type. Prettier formats it afterwards (lib/client-gen/generate.ts).

export function typescriptContract(contract: Contract, header: string): string {
  const named = new Map<string, string>();
  for (const shared of SHARED_SHAPES) named.set(shapeKey(shared.schema), shared.name);
  for (const type of contract.types) named.set(shapeKey(type.schema), type.name);

  const typeOf = (schema: JsonSchema, root?: string): string => {
    if (schema.$ref) {
      const name = contract.refNames.get(schema.$ref);
      if (!name) throw new Error(`No name for ${schema.$ref}.`);
      return name;
    }
    const { schema: inner, nullable } = splitNull(schema);
    if (nullable) return `${typeOf(inner)} | null`;
    const name = named.get(shapeKey(schema));
    if (name && name !== root) return name;
    if (schema.const !== undefined) return JSON.stringify(schema.const);
    const enumAlias = enumName(schema);
    if (enumAlias && enumAlias !== root) return enumAlias;
    if (schema.enum) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
    const options = schema.anyOf ?? schema.oneOf;
    if (options) return options.map((option) => `(${typeOf(option)})`).join(" | ");
    if (Array.isArray(schema.type)) {
      return schema.type.map((type) => typeOf({ ...schema, type })).join(" | ");
    }
    switch (schema.type) {
      case "string":
        return "string";
      case "integer":
      case "number":
        return "number";
      case "boolean":
        return "boolean";
      case "array":
        return `${wrap(typeOf(schema.items ?? {}))}[]`;
      case "object":
        return isMap(schema) ? "Record<string, unknown>" : objectType(schema);
      case undefined:
        return "unknown";
      default:
        throw new Error(`No TypeScript type for JSON Schema type ${schema.type}.`);
    }
  };

  const objectType = (schema: JsonSchema): string => {
    const required = new Set(schema.required ?? []);
    const fields = Object.entries(schema.properties ?? {}).map(
      ([field, value]) =>
        `${doc(value.description)}${field}${required.has(field) ? "" : "?"}: ${typeOf(value)};`,
    );
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      fields.push("[field: string]: unknown;");
    }
    return `{\n${fields.join("\n")}\n}`;
  };

  const lines = [
    header.replace(/^/gm, "// "),
    "",
    "/** Every `error.code` the API answers with (the server's lib/errors.ts). */",
    `export const API_ERROR_CODES = [${contract.errorCodes.map((code) => JSON.stringify(code)).join(", ")}] as const;`,
    "",
    "/** The API contract's error codes. */",
    "export type ApiErrorCode = (typeof API_ERROR_CODES)[number];",
  ];
  for (const [values, name] of Object.entries(ENUM_NAMES)) {
    lines.push("", `export type ${name} = ${typeOf({ enum: values.split(",") }, name)};`);
  }
  for (const shared of SHARED_SHAPES) {
    lines.push("", `export type ${shared.name} = ${typeOf(shared.schema, shared.name)};`);
  }
  for (const type of contract.types) {
    lines.push(
      "",
      `${doc(type.schema.description)}export type ${type.name} = ${typeOf(type.schema, type.name)};`,
    );
  }
  return `${lines.join("\n")}\n`;
}

function wrap(type: string): string {
  return /^[\w.]+$/.test(type) || type.startsWith("{") ? type : `(${type})`;
}

function doc(description: string | undefined): string {
  return description ? `/** ${description.replaceAll("*/", "*\\/")} */\n` : "";
}
