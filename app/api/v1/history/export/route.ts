import { exportHistory } from "@/lib/history/export-history";
import { apiRoute } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ request, actor }) => {
  const file = await exportHistory(actor, queryOf(request));
  return new Response(file.body, {
    headers: {
      "content-type": file.contentType,
      "content-disposition": `attachment; filename="${file.filename}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      // The export stops after this many calls (whole batches); truncated says it did.
      "x-countersign-export-limit": String(file.callLimit),
      "x-countersign-export-truncated": String(file.truncated),
      "x-countersign-matching-calls": String(file.matchingCalls),
    },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
