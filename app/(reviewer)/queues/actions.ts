"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { Id } from "@/lib/ids";
import { addMember } from "@/lib/queues/add-member";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { changeRole } from "@/lib/queues/change-role";
import { createQueue } from "@/lib/queues/create-queue";
import { removeMember } from "@/lib/queues/remove-member";
import { updateQueue } from "@/lib/queues/update-queue";

// Public endpoints like the API routes: each authenticates from the session, and the verbs check
// the caller's role in the queue and validate the input. Expected failures are answered, not thrown.

export const createQueueAction = reviewerAction([z.unknown()], async (reviewer, [input]) => ({
  queue: await createQueue(reviewer, input),
}));

export const updateQueueAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [queueId, input]) => ({ queue: await updateQueue(reviewer, queueId, input) }),
);

export const archiveQueueAction = reviewerAction([Id], async (reviewer, [queueId]) => ({
  queue: await archiveQueue(reviewer, queueId),
}));

export const addMemberAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [queueId, input]) => ({ member: await addMember(reviewer, queueId, input) }),
);

export const changeRoleAction = reviewerAction(
  [Id, Id, z.unknown()],
  async (reviewer, [queueId, userId, role]) => ({
    member: await changeRole(reviewer, queueId, userId, { role }),
  }),
);

export const removeMemberAction = reviewerAction([Id, Id], async (reviewer, [queueId, userId]) => ({
  member: await removeMember(reviewer, queueId, userId),
}));
