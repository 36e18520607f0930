"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import { parseInput } from "@/lib/api/parse";
import { addMember } from "@/lib/queues/add-member";
import { archiveQueue } from "@/lib/queues/archive-queue";
import { changeRole } from "@/lib/queues/change-role";
import { createQueue } from "@/lib/queues/create-queue";
import type { QueueDetailView, QueueMemberView } from "@/lib/queues/queue-views";
import { removeMember } from "@/lib/queues/remove-member";
import { updateQueue } from "@/lib/queues/update-queue";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like the API routes: each authenticates from the session, and the verbs check
// the caller's role in the queue and validate the input. Expected failures are answered, not thrown.

const Id = z.string().min(1).max(200);

export async function createQueueAction(
  input: unknown,
): Promise<ActionResult<{ queue: QueueDetailView }>> {
  try {
    return { ok: true, queue: await createQueue(await actionReviewer(), input) };
  } catch (error) {
    return actionError(error);
  }
}

export async function updateQueueAction(
  queueId: string,
  input: unknown,
): Promise<ActionResult<{ queue: QueueDetailView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, queueId);
    return { ok: true, queue: await updateQueue(reviewer, queueId, input) };
  } catch (error) {
    return actionError(error);
  }
}

export async function archiveQueueAction(
  queueId: string,
): Promise<ActionResult<{ queue: QueueDetailView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, queueId);
    return { ok: true, queue: await archiveQueue(reviewer, queueId) };
  } catch (error) {
    return actionError(error);
  }
}

export async function addMemberAction(
  queueId: string,
  input: unknown,
): Promise<ActionResult<{ member: QueueMemberView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, queueId);
    return { ok: true, member: await addMember(reviewer, queueId, input) };
  } catch (error) {
    return actionError(error);
  }
}

export async function changeRoleAction(
  queueId: string,
  userId: string,
  role: unknown,
): Promise<ActionResult<{ member: QueueMemberView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(z.object({ queueId: Id, userId: Id }), { queueId, userId });
    return { ok: true, member: await changeRole(reviewer, queueId, userId, { role }) };
  } catch (error) {
    return actionError(error);
  }
}

export async function removeMemberAction(
  queueId: string,
  userId: string,
): Promise<ActionResult<{ member: QueueMemberView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(z.object({ queueId: Id, userId: Id }), { queueId, userId });
    return { ok: true, member: await removeMember(reviewer, queueId, userId) };
  } catch (error) {
    return actionError(error);
  }
}
