"use server";

import { z } from "zod";
import { publicAction } from "@/app/server-action";
import { createFirstAdmin } from "@/lib/admin/create-first-admin";

/**
 * First-run setup. Public by necessity: it takes the setup code the server printed, and is
 * refused as soon as any account exists.
 */
export const createFirstAdminAction = publicAction(
  [z.unknown()],
  async ([input]) => ({ email: (await createFirstAdmin(input)).email }),
  {
    // A wrong or replaced setup code is the one refusal here that is about a field.
    onError: (failure) =>
      failure.code === "forbidden"
        ? { ...failure, fieldErrors: { setupCode: failure.message } }
        : failure,
  },
);
