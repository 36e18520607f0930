"use server";

import { actionError, type ActionResult } from "@/app/action-result";
import { saveSsoSettings } from "@/lib/sso/save-sso-settings";
import type { SsoSettingsView } from "@/lib/sso/sso-settings";
import { actionReviewer } from "../../current-reviewer";

// A public endpoint like PUT /api/v1/sso: only an admin saves; the answer never holds the secret.
export async function saveSsoSettingsAction(
  input: unknown,
): Promise<ActionResult<{ settings: SsoSettingsView }>> {
  try {
    const reviewer = await actionReviewer();
    return { ok: true, settings: await saveSsoSettings(reviewer, input) };
  } catch (error) {
    return actionError(error);
  }
}
