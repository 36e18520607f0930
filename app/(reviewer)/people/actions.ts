"use server";

import { z } from "zod";
import { reviewerAction } from "@/app/server-action";
import { Id } from "@/lib/ids";
import { invitePerson } from "@/lib/people/invite-person";
import { issuePasswordReset } from "@/lib/people/person-links";
import { updatePerson } from "@/lib/people/update-person";

// Public endpoints like the API routes: each authenticates from the session; the verbs check who
// may manage whom (lib/people/people-access.ts) and validate the input.

/** Invite (a link shown once) or, for admins, create with a password. */
export const invitePersonAction = reviewerAction([z.unknown()], (reviewer, [input]) =>
  invitePerson(reviewer, input),
);

/** Rename, deactivate or reactivate (admins). */
export const updatePersonAction = reviewerAction(
  [Id, z.unknown()],
  async (reviewer, [userId, input]) => ({ person: await updatePerson(reviewer, userId, input) }),
);

/** A one-time password reset link, shown once. */
export const passwordResetAction = reviewerAction([Id], async (reviewer, [userId]) => ({
  link: await issuePasswordReset(reviewer, userId),
}));
