import { exportAudit } from "@/lib/audit/export-audit";
import { apiRoute } from "@/lib/http/api-route";
import { queryOf } from "@/lib/http/read-body";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ request, actor }) => {
  const file = await exportAudit(actor, queryOf(request));
  return new Response(file.body, {
    headers: {
      "content-type": file.contentType,
      "content-disposition": `attachment; filename="${file.filename}"`,
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
    },
  });
});

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
