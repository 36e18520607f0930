import { sql } from "drizzle-orm";
import { getDb } from "@/db/client";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-dynamic";

export async function GET() {
  try {
    await getDb().run(sql`select 1`);
    return Response.json({ ok: true }, { headers: { "cache-control": "no-store" } });
  } catch {
    return Response.json(
      { ok: false, error: { code: "unavailable", message: "The database does not answer." } },
      { status: 503, headers: { "retry-after": "5", "cache-control": "no-store" } },
    );
  }
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
