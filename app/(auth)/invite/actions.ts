"use server";

import { actionError, type ActionResult } from "@/app/action-result";
import { redeemLink } from "@/lib/people/person-links";

/**
 * Sets the password of an invite or a reset link. Public by necessity: the one-time token in the
 * input is the authority (redeemLink checks it, uses it up, and writes its event).
 */
export async function redeemLinkAction(input: {
  token: string;
  password: string;
}): Promise<ActionResult<{ email: string }>> {
  try {
    return { ok: true, ...(await redeemLink(input)) };
  } catch (error) {
    return actionError(error);
  }
}
