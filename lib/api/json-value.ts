import { z } from "zod";

/**
 * Any JSON value, as `z.json()` accepts, but named: `z.json()` recurses through an anonymous lazy
 * schema that zod emits as `#/$defs/__schema0` inside each body, a reference OpenAPI tools cannot
 * resolve. Recursing through this id'd schema makes it one `JsonValue` component instead.
 */
export const JsonValue: z.ZodType<z.core.util.JSONType> = z
  .lazy(() =>
    z.union([
      z.string(),
      z.number(),
      z.boolean(),
      z.null(),
      z.array(JsonValue),
      z.record(z.string(), JsonValue),
    ]),
  )
  .meta({ id: "JsonValue", description: "Any JSON value" });
export type JsonValue = z.infer<typeof JsonValue>;
