import { eventStreamResponse } from "@/lib/events/open-stream";
import { runStreamFilter } from "@/lib/events/stream-scope";
import { apiRoute } from "@/lib/http/api-route";

export const dynamic = "force-dynamic";

export const GET = apiRoute<{ runId: string }>(async ({ request, params, actor }) =>
  eventStreamResponse(request, await runStreamFilter(actor, params.runId)),
);
