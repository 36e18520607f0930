import { eventStreamResponse } from "@/lib/events/open-stream";
import { runStreamFilter } from "@/lib/events/stream-scope";
import { apiRoute } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute<{ runId: string }>(async ({ request, params, actor, credential }) =>
  eventStreamResponse(request, await runStreamFilter(actor, params.runId), credential),
);

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
