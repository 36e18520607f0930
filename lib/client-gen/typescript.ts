import {
  type Contract,
  type ContractSelection,
  ENUM_NAMES,
  enumName,
  isMap,
  type JsonSchema,
  type NamedType,
  SHARED_SHAPES,
  shapeKey,
  splitNull,
} from "./contract-types";

// The TypeScript SDK's contract file: the error codes as a const array and union, and each
// resource and request body as a type. With a selection (the review card's), only the enums and
// the selected types, without the error codes. Prettier formats it afterwards
// (lib/client-gen/generate.ts).

export function typescriptContract(
  contract: Contract,
  header: string,
  selection?: ContractSelection,
): string {
  const types = selection ? selected(contract, selection) : contract.types;
  const named = new Map<string, string>();
  for (const shared of SHARED_SHAPES) named.set(shapeKey(shared.schema), shared.name);
  for (const type of types) named.set(shapeKey(type.schema), type.name);

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
        if (isMap(schema)) return "Record<string, unknown>";
        return objectType(schema, root === undefined ? [] : (selection?.optional[root] ?? []));
      case undefined:
        return "unknown";
      default:
        throw new Error(`No TypeScript type for JSON Schema type ${schema.type}.`);
    }
  };

  const objectType = (schema: JsonSchema, optional: readonly string[]): string => {
    const required = new Set((schema.required ?? []).filter((field) => !optional.includes(field)));
    const fields = Object.entries(schema.properties ?? {}).map(
      ([field, value]) =>
        `${doc(value.description)}${field}${required.has(field) ? "" : "?"}: ${typeOf(value)};`,
    );
    if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
      fields.push("[field: string]: unknown;");
    }
    return `{\n${fields.join("\n")}\n}`;
  };

  const lines = [header.replace(/^/gm, "// ")];
  if (!selection) {
    lines.push(
      "",
      "/** Every `error.code` the API answers with (the server's lib/errors.ts). */",
      `export const API_ERROR_CODES = [${contract.errorCodes.map((code) => JSON.stringify(code)).join(", ")}] as const;`,
      "",
      "/** The API contract's error codes. */",
      "export type ApiErrorCode = (typeof API_ERROR_CODES)[number];",
    );
  }
  for (const [values, name] of Object.entries(ENUM_NAMES)) {
    lines.push("", `export type ${name} = ${typeOf({ enum: values.split(",") }, name)};`);
  }
  for (const shared of SHARED_SHAPES) {
    lines.push("", `export type ${shared.name} = ${typeOf(shared.schema, shared.name)};`);
  }
  for (const type of types) {
    lines.push(
      "",
      `${doc(type.schema.description)}export type ${type.name} = ${typeOf(type.schema, type.name)};`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The selected types, in the contract's order; fails on a type or field the contract lacks. */
function selected(contract: Contract, selection: ContractSelection): NamedType[] {
  const types = contract.types.filter((type) => selection.types.includes(type.name));
  const names = new Set(types.map((type) => type.name));
  for (const name of selection.types) {
    if (!names.has(name)) throw new Error(`The contract has no type ${name}.`);
  }
  for (const type of types) {
    for (const ref of JSON.stringify(type.schema).matchAll(/"\$ref":"([^"]+)"/g)) {
      const name = contract.refNames.get(ref[1]!);
      if (!name || !names.has(name)) {
        throw new Error(
          `${type.name} refers to ${name ?? ref[1]}, which the selection leaves out.`,
        );
      }
    }
  }
  for (const [name, fields] of Object.entries(selection.optional)) {
    const type = types.find((candidate) => candidate.name === name);
    for (const field of fields) {
      if (!type?.schema.properties?.[field]) {
        throw new Error(`The contract's ${name} has no field ${field} to type optional.`);
      }
    }
  }
  return types;
}

function wrap(type: string): string {
  return /^[\w.]+$/.test(type) || type.startsWith("{") ? type : `(${type})`;
}

function doc(description: string | undefined): string {
  return description ? `/** ${description.replaceAll("*/", "*\\/")} */\n` : "";
}
