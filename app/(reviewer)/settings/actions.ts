"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { updateMySettings } from "@/lib/people/my-settings";

// A public endpoint like PATCH /me: the session's reviewer changes their own settings, nobody
// else's (there is no way to name another person).

export const saveMySettingsAction = reviewerAction([z.unknown()], async (reviewer, [input]) => ({
  settings: await updateMySettings(reviewer, input),
}));
