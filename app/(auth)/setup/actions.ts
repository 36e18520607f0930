"use server";

import { createFirstAdmin } from "@/lib/auth/create-first-admin";
import { actionError, type ActionResult } from "@/app/action-result";

/**
 * First-run setup. Public by necessity: it takes the setup code the server printed, and is
 * refused as soon as any account exists.
 */
export async function createFirstAdminAction(input: {
  name: string;
  email: string;
  password: string;
  setupCode: string;
}): Promise<ActionResult<{ email: string }>> {
  try {
    const admin = await createFirstAdmin(input);
    return { ok: true, email: admin.email };
  } catch (error) {
    const failure = actionError(error);
    // A wrong or replaced setup code is the one refusal here that is about a field.
    return failure.code === "forbidden"
      ? { ...failure, fieldErrors: { setupCode: failure.message } }
      : failure;
  }
}
