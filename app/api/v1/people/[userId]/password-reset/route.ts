import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { issuePasswordReset } from "@/lib/people/person-links";

export const dynamic = "force-dynamic";

export const POST = apiRoute<{ userId: string }>(async ({ actor, params }) =>
  json(await issuePasswordReset(actor, params.userId), 201),
);

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("POST");
