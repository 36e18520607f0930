import { apiRoute, json } from "@/lib/http/api-route";
import { createQueue } from "@/lib/queues/create-queue";
import { listQueues } from "@/lib/queues/list-queues";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await listQueues(actor)));

export const POST = apiRoute(async ({ body, actor }) => json(await createQueue(actor, body), 201));

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
