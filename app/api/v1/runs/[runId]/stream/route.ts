import { eventStreamResponse } from "@/lib/events/open-stream";
import { runStreamFilter } from "@/lib/events/stream-scope";
import { takeStreamSlot } from "@/lib/events/stream-slots";
import { apiRoute } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute<{ runId: string }>(async ({ request, params, actor, credential }) => {
  const filter = await runStreamFilter(actor, params.runId);
  return eventStreamResponse(request, filter, credential, takeStreamSlot(actor));
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
