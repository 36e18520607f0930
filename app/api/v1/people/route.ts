import { requireSignedIn } from "@/lib/auth/require-session";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { invitePerson } from "@/lib/people/invite-person";
import { listPeople } from "@/lib/people/list-people";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await listPeople(actor)));

export const POST = apiRoute(async ({ body, actor, credential }) => {
  // an invite link, or an account with a password the caller chose: a credential either way
  requireSignedIn(credential, "People are invited or created");
  return json(await invitePerson(actor, body), 201);
});

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
