// Which parts of the OpenAPI document the clients carry, and under which names. Both emitters
// (TypeScript and Python) walk the same list, so the two packages cannot disagree on a shape.

/** A JSON Schema as z.toJSONSchema writes it into the document. */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
  description?: string;
  default?: unknown;
};

/** One named type a client declares: a component of the document, or an operation's body. */
export type NamedType = { name: string; schema: JsonSchema };

type Document = {
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>
  >;
  components: { schemas: Record<string, JsonSchema> };
};

/**
 * The document's components an agent's client reads, and the name each has in the clients
 * (`Event` is `RunEvent` and `Claim` `ClaimGrant` there: the SDKs have a `Claim` class of their
 * own). A component these refer to must be listed too, or generation fails.
 */
const RESOURCES: [component: string, name: string][] = [
  ["Vote", "Vote"],
  ["Decision", "Decision"],
  ["Call", "Call"],
  ["Plan", "Plan"],
  ["Batch", "Batch"],
  ["Run", "Run"],
  ["Event", "RunEvent"],
  ["Claim", "ClaimGrant"],
  ["Lease", "Lease"],
  ["ErrorResponse", "ErrorResponse"],
];

/** The request bodies the clients send, by the operation that takes them. */
const BODIES: {
  name: string;
  path: string;
  method: string;
  pick?: (body: JsonSchema) => JsonSchema;
}[] = [
  { name: "CreateRunInput", path: "/runs", method: "post" },
  { name: "BatchInput", path: "/runs/{runId}/batches", method: "post" },
  {
    name: "CallInput",
    path: "/runs/{runId}/batches",
    method: "post",
    pick: (body) => body.properties!.calls!.items!,
  },
];

/**
 * The review card's wire types (components/review-card/contract.gen.ts): the resources it renders
 * and, by type, the fields a server older than the card may leave out, typed optional there (the
 * card falls back without them; a field listed here that the contract does not have fails
 * generation).
 */
export const REVIEW_CARD = {
  types: ["Vote", "Decision", "Call", "Plan", "Batch"],
  optional: {
    Vote: ["actionHash"],
    Decision: ["policy"],
    Call: ["costCurrency"],
    Batch: ["escalations", "routing", "claim", "setAside"],
  },
} satisfies ContractSelection;

/** Part of the contract for a client that carries only some of its types (the review card). */
export type ContractSelection = {
  /** the clients' names of the types it carries, with every type they refer to */
  types: readonly string[];
  /** by type: fields typed optional although the server always sends them */
  optional: Record<string, readonly string[]>;
};

/** Shapes that recur inline and get a name of their own (matched by their JSON). */
export const SHARED_SHAPES: NamedType[] = [
  {
    name: "Ref",
    schema: {
      type: "object",
      properties: { id: { type: "string" }, name: { type: "string" } },
      required: ["id", "name"],
      additionalProperties: false,
    },
  },
];

export type Contract = {
  /** every `error.code` the server answers with, in lib/errors.ts's order */
  errorCodes: readonly string[];
  /** the named types, each after the ones it refers to */
  types: NamedType[];
  /** the document's `#/components/schemas/X` → the clients' name for X */
  refNames: Map<string, string>;
};

/** What the clients are generated from: the served document and the server's error codes. */
export function contractOf(document: Document, errorCodes: readonly string[]): Contract {
  const refNames = new Map(
    RESOURCES.map(([component, name]) => [`#/components/schemas/${component}`, name]),
  );
  const types: NamedType[] = [];
  for (const [component, name] of RESOURCES) {
    const schema = document.components.schemas[component];
    if (!schema) throw new Error(`The OpenAPI document has no component ${component}.`);
    for (const ref of refsIn(schema)) {
      if (!refNames.has(ref)) {
        throw new Error(
          `${component} refers to ${ref}, which lib/client-gen/contract-types.ts does not list.`,
        );
      }
    }
    types.push({ name, schema: withoutPatterns(schema) });
  }
  for (const { name, path, method, pick } of BODIES) {
    const body = document.paths[path]?.[method]?.requestBody?.content["application/json"]?.schema;
    if (!body)
      throw new Error(`The OpenAPI document has no JSON body for ${method.toUpperCase()} ${path}.`);
    types.push({ name, schema: withoutPatterns(pick ? pick(body) : body) });
  }
  return { errorCodes, types: dependencyOrder(types, refNames), refNames };
}

function refsIn(schema: unknown): string[] {
  return [...JSON.stringify(schema).matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1]!);
}

// Patterns and bounds validate on the server; the types carry neither, and dropping them lets an
// inline shape match its named twin (a body's `batch` is the BatchInput body).
const VALIDATION_ONLY = new Set([
  "pattern",
  "format",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "maxItems",
  "propertyNames",
]);

function withoutPatterns(schema: JsonSchema): JsonSchema {
  const walk = (value: unknown, inProperties: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, false));
    if (!value || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value)
        // under `properties` the keys are field names (a field may be called `format`)
        .filter(([key]) => inProperties || !VALIDATION_ONLY.has(key))
        .map(([key, item]) => [key, walk(item, !inProperties && key === "properties")]),
    );
  };
  return walk(schema, false) as JsonSchema;
}

/** Each type after those it refers to, so Python can read the file top to bottom. */
function dependencyOrder(types: NamedType[], refNames: Map<string, string>): NamedType[] {
  const byName = new Map(types.map((type) => [type.name, type]));
  const ordered: NamedType[] = [];
  const seen = new Set<string>();
  const visit = (type: NamedType) => {
    if (seen.has(type.name)) return;
    seen.add(type.name);
    for (const ref of refsIn(type.schema)) visit(byName.get(refNames.get(ref)!)!);
    ordered.push(type);
  };
  types.forEach(visit);
  return ordered;
}

/** `schema` without `null` in its type, and whether it allowed null. */
export function splitNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  if (Array.isArray(schema.type) && schema.type.includes("null")) {
    const rest = schema.type.filter((type) => type !== "null");
    return { schema: { ...schema, type: rest.length === 1 ? rest[0] : rest }, nullable: true };
  }
  const options = schema.anyOf ?? schema.oneOf;
  if (options?.some((option) => option.type === "null")) {
    const rest = options.filter((option) => option.type !== "null");
    const { anyOf: _anyOf, oneOf: _oneOf, ...outer } = schema;
    return {
      schema: rest.length === 1 ? { ...rest[0], ...outer } : { ...outer, anyOf: rest },
      nullable: true,
    };
  }
  return { schema, nullable: false };
}

/** The same JSON whatever the key order and descriptions: how an inline shape finds its name. */
export function shapeKey(schema: JsonSchema): string {
  return JSON.stringify(schema, (key, value: unknown) => {
    if (key === "description" || key === "default") return undefined;
    if (value && typeof value === "object" && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
    }
    return value;
  });
}

/** Whether an object schema has properties to type, or is a free-form map. */
export function isMap(schema: JsonSchema): boolean {
  return !schema.properties && typeof schema.additionalProperties === "object";
}

/**
 * Names of the enums both clients export, by their values (the SDKs' `RunStatus`, `BatchKind`…).
 * An enum not listed stays inline in TypeScript and gets its owner's name in Python.
 */
export const ENUM_NAMES: Record<string, string> = {
  "running,waiting_approval,ready,resuming,completed,failed,cancelled": "RunStatus",
  "action,plan": "BatchKind",
  "pending,decided,expired,cancelled": "BatchStatus",
  "approved,rejected,mixed": "BatchOutcome",
  "pending,approved,rejected,expired,cancelled": "CallStatus",
  "reviewer,policy,memory,timeout": "DecisionSource",
  "once,run,conversation": "RememberScope",
  "reject,approve,escalate": "TimeoutAction",
  "ask,allow,deny,off": "AgentMode",
  "allow,ask,deny": "PolicyEffect",
};

/** The enum's shared name, if it has one. */
export function enumName(schema: JsonSchema): string | undefined {
  return schema.enum ? ENUM_NAMES[schema.enum.join(",")] : undefined;
}
