"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { saveSsoSettings } from "@/lib/sso/save-sso-settings";

// A public endpoint like PUT /api/v1/sso: only an admin saves; the answer never holds the secret.
export const saveSsoSettingsAction = reviewerAction([z.unknown()], async (reviewer, [input]) => ({
  settings: await saveSsoSettings(reviewer, input),
}));
