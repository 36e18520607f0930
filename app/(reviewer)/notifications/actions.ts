"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { Id } from "@/lib/ids";
import { setNotificationPreference } from "@/lib/notifications/preferences";

// A public endpoint like PUT /me/notification-preferences/{queueId}: the session's reviewer sets
// their own preferences for one of their queues (another queue does not exist for them).

export const saveNotificationPreferenceAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [queueId, input]) => ({
    preference: await setNotificationPreference(reviewer, queueId, input),
  }),
);
