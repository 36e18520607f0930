import { openApiDocument } from "@/lib/contract/openapi";
import { publicBaseUrl } from "@/lib/config/listen-address";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";

// Dynamic: `?server=absolute` names the installation's absolute address as the only server, and
// that address (PUBLIC_URL) is read when the server runs, not when it is built.
export const dynamic = "force-dynamic";

export function GET(request: Request) {
  const server = new URL(request.url).searchParams.get("server");
  return Response.json(
    openApiDocument(publicBaseUrl(), server === "absolute" ? "absolute" : "relative"),
  );
}

export const { POST, PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET");
