import { eventStreamResponse } from "@/lib/events/open-stream";
import { queueStreamFilter } from "@/lib/events/stream-scope";
import { takeStreamSlot } from "@/lib/events/stream-slots";
import { apiRoute } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ request, actor, credential }) => {
  const queues = new URL(request.url).searchParams.getAll("queue");
  const filter = await queueStreamFilter(actor, queues);
  return eventStreamResponse(request, filter, credential, takeStreamSlot(actor));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
