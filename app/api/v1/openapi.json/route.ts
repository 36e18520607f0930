import { openApiDocument } from "@/lib/api/openapi";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

export const dynamic = "force-static";

export function GET() {
  return Response.json(openApiDocument());
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
