import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { updatePerson } from "@/lib/people/update-person";

export const dynamic = "force-dynamic";

export const PATCH = apiRoute<{ userId: string }>(async ({ actor, params, body }) =>
  json(await updatePerson(actor, params.userId, body)),
);

export const { GET, HEAD, POST, PUT, DELETE, OPTIONS } = refuseOtherMethods("PATCH");
