import { apiRoute, json } from "@/lib/http/api-route";
import { addMember } from "@/lib/queues/add-member";
import { listMembers } from "@/lib/queues/get-queue";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute<{ queueId: string }>(async ({ params, actor }) =>
  json(await listMembers(actor, params.queueId)),
);

export const POST = apiRoute<{ queueId: string }>(async ({ params, body, actor }) =>
  json(await addMember(actor, params.queueId, body), 201),
);

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
