import { z } from "zod";
import { ILL_FORMED_MESSAGE, isWellFormedText } from "@/lib/text/stored-text";

/** A string of JSON data: any characters, but Unicode (stored-text.ts says why). */
const JsonString = z.string().refine(isWellFormedText, ILL_FORMED_MESSAGE);

/**
 * Any JSON value, as `z.json()` accepts, but named: `z.json()` recurses through an anonymous lazy
 * schema that zod emits as `#/$defs/__schema0` inside each body, a reference OpenAPI tools cannot
 * resolve. Recursing through this id'd schema makes it one `JsonValue` component instead.
 * Lone surrogates are refused in its strings and keys, as in any API body (a server action's
 * arguments do not pass the body reader); control characters are data here and kept.
 */
export const JsonValue: z.ZodType<z.core.util.JSONType> = z
  .lazy(() =>
    z.union([
      JsonString,
      z.number(),
      z.boolean(),
      z.null(),
      z.array(JsonValue),
      z.record(JsonString, JsonValue),
    ]),
  )
  .meta({ id: "JsonValue", description: "Any JSON value" });
export type JsonValue = z.infer<typeof JsonValue>;
