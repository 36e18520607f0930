import { eventStreamResponse } from "@/lib/events/open-stream";
import { queueStreamFilter } from "@/lib/events/stream-scope";
import { apiRoute } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ request, actor, credential }) => {
  const queues = new URL(request.url).searchParams.getAll("queue");
  return eventStreamResponse(request, await queueStreamFilter(actor, queues), credential);
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
