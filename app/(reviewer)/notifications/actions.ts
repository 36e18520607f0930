"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import { parseInput } from "@/lib/api/parse";
import {
  setNotificationPreference,
  type NotificationPreferenceView,
} from "@/lib/notifications/preferences";
import { actionReviewer } from "../current-reviewer";

// A public endpoint like PUT /me/notification-preferences/{queueId}: the session's reviewer sets
// their own preferences for one of their queues (another queue does not exist for them).

const Id = z.string().min(1).max(200);

export async function saveNotificationPreferenceAction(
  queueId: string,
  input: unknown,
): Promise<ActionResult<{ preference: NotificationPreferenceView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, queueId);
    return { ok: true, preference: await setNotificationPreference(reviewer, queueId, input) };
  } catch (error) {
    return actionError(error);
  }
}
