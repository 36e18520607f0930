"use server";

import { actionError, type ActionResult } from "@/app/action-result";
import { updateMySettings, type MySettings } from "@/lib/people/my-settings";
import { actionReviewer } from "../current-reviewer";

// A public endpoint like PATCH /me: the session's reviewer changes their own settings, nobody
// else's (there is no way to name another person).

export async function saveMySettingsAction(
  input: unknown,
): Promise<ActionResult<{ settings: MySettings }>> {
  try {
    const reviewer = await actionReviewer();
    return { ok: true, settings: await updateMySettings(reviewer, input) };
  } catch (error) {
    return actionError(error);
  }
}
