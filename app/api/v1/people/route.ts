import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { invitePerson } from "@/lib/people/invite-person";
import { listPeople } from "@/lib/people/list-people";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await listPeople(actor)));

export const POST = apiRoute(async ({ body, actor }) => json(await invitePerson(actor, body), 201));

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
