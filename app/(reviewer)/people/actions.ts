"use server";

import { z } from "zod";
import { actionError, type ActionResult } from "@/app/action-result";
import { parseInput } from "@/lib/api/parse";
import { invitePerson } from "@/lib/people/invite-person";
import type { PersonView } from "@/lib/people/list-people";
import { issuePasswordReset, type IssuedLink } from "@/lib/people/person-links";
import { updatePerson } from "@/lib/people/update-person";
import { actionReviewer } from "../current-reviewer";

// Public endpoints like the API routes: each authenticates from the session; the verbs check who
// may manage whom (lib/people/people-access.ts) and validate the input.

const Id = z.string().min(1).max(200);

/** Invite (a link shown once) or, for admins, create with a password. */
export async function invitePersonAction(
  input: unknown,
): Promise<ActionResult<{ person: PersonView; invite: IssuedLink | null }>> {
  try {
    return { ok: true, ...(await invitePerson(await actionReviewer(), input)) };
  } catch (error) {
    return actionError(error);
  }
}

/** Rename, deactivate or reactivate (admins). */
export async function updatePersonAction(
  userId: string,
  input: unknown,
): Promise<ActionResult<{ person: PersonView }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, userId);
    return { ok: true, person: await updatePerson(reviewer, userId, input) };
  } catch (error) {
    return actionError(error);
  }
}

/** A one-time password reset link, shown once. */
export async function passwordResetAction(
  userId: string,
): Promise<ActionResult<{ link: IssuedLink }>> {
  try {
    const reviewer = await actionReviewer();
    parseInput(Id, userId);
    return { ok: true, link: await issuePasswordReset(reviewer, userId) };
  } catch (error) {
    return actionError(error);
  }
}
