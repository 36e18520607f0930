import { describe, expectTypeOf, it } from "vitest";
import type { z } from "zod";
import type { Batch, Call, DecisionResult } from "@/components/review-card/index";
import type { BatchResource, CallResource } from "@/lib/read-models/resource-schemas";

// Compile-time: `tsc --noEmit` fails if the API's resources stop fitting the card's wire types.
describe("review card wire types", () => {
  it("accept every Batch the API can return", () => {
    expectTypeOf<z.infer<typeof BatchResource>>().toExtend<Batch>();
  });

  it("accept every Call the API can return (a call decision's 409 `current`)", () => {
    expectTypeOf<z.infer<typeof CallResource>>().toExtend<Call>();
    expectTypeOf<{
      ok: false;
      code: string;
      message: string;
      current: z.infer<typeof CallResource>;
    }>().toExtend<DecisionResult>();
  });
});
