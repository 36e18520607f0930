import { InvitePersonInput, invitePerson } from "@/lib/people/invite-person";
import { json } from "@/lib/http/api-route";
import { listPeople } from "@/lib/people/list-people";
import { UpdatePersonInput, updatePerson } from "@/lib/people/update-person";
import { issuePasswordReset } from "@/lib/people/person-links";
import { defineEndpoint } from "../endpoint";

export const peopleEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/people",
    auth: "reviewer",
    operationId: "listPeople",
    tag: "People",
    summary:
      "People with their queues, status and last sign-in: everyone for admins, the members of the queues they lead for leads",
    ok: { status: 200, schema: "PersonList" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await listPeople(actor)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/people",
    auth: "session",
    // an invite link, or an account with a password the caller chose: a credential either way
    signedIn: "People are invited or created",
    operationId: "invitePerson",
    tag: "People",
    summary: "Invite someone by a one-time link, or (admins) create them with a password",
    description:
      "Without `password` the answer carries `invite.url`, shown this once: opening it lets them set a password (7 days, one use). A lead invites only into the queues they lead, as reviewer or lead. An email already used is 409 already_exists (with the person's id; for a lead, when the address belongs to someone outside the queues they lead, with `current: null` and a message that names no one). From a signed-in session only (a key or token is 403). Writes a person.invited (or person.created) event and a member.added per queue.",
    body: InvitePersonInput,
    ok: { status: 201, schema: "InvitedPerson" },
    errors: [400, 401, 403, 409, 413, 415],
    handler: async ({ body, actor }) => json(await invitePerson(actor, body), 201),
  }),
  defineEndpoint({
    method: "PATCH",
    path: "/people/{userId}",
    auth: "reviewer",
    operationId: "updatePerson",
    tag: "People",
    summary: "Rename, deactivate or reactivate someone (admins)",
    description:
      "A rename changes no past decision: decisions and votes keep the name (and email) recorded when they were made. Deactivating ends every session of theirs, revokes their personal tokens and retires their open invite and reset links in the same write; they cannot sign in until reactivated (their tokens stay revoked). Nobody deactivates themselves (403), and the last active admin cannot be deactivated (409 last_admin). Writes person.renamed / person.deactivated / person.reactivated events.",
    body: UpdatePersonInput,
    ok: { status: 200, schema: "Person" },
    errors: [400, 401, 403, 404, 409, 413, 415],
    handler: async ({ actor, params, body }) =>
      json(await updatePerson(actor, params.userId, body)),
  }),
  defineEndpoint({
    method: "POST",
    path: "/people/{userId}/password-reset",
    auth: "session",
    // a token resetting its own account's password signed in and minted new tokens (issue 24)
    signedIn: "Password reset links are issued",
    operationId: "issuePasswordReset",
    tag: "People",
    summary: "A one-time password reset link (admins; leads for members of only their queues)",
    description:
      "The link is in this answer only; it works once, for 24 hours, and replaces any earlier unused one. Using it ends every session of theirs and revokes every personal token of theirs. From a signed-in session only (a key or token is 403: it would mint its own successor). A lead may not reset an admin's password, nor that of someone who belongs to a queue the lead does not lead (403). Writes a person.password_reset_issued event.",
    ok: { status: 201, schema: "OneTimeLink" },
    errors: [401, 403, 404],
    handler: async ({ actor, params }) => json(await issuePasswordReset(actor, params.userId), 201),
  }),
];
