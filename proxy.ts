import { NextResponse, type NextRequest } from "next/server";
import { embedContentSecurityPolicy } from "@/app/embed/allowed-origins";
import { NotFoundError, toResponse } from "@/lib/errors";

// Runs only for the paths its matcher names, so the API's hot paths never pay for it:
// - /embed/…: only the embed route may be framed, and only by EMBED_ALLOWED_ORIGINS. The header
//   is set here rather than in next.config.ts because `next build` freezes config headers into
//   the build: a host added at deploy time would otherwise need a rebuild.
// - a path with a percent sign: Next answers a bare 500 for an escape that does not decode
//   (`/api/v1/batches/%`); no such id can exist, so it is answered as a missing one.
export function proxy(request: NextRequest) {
  const { pathname } = request.nextUrl;
  if (!decodes(pathname)) {
    return pathname.startsWith("/api/")
      ? toResponse(new NotFoundError("Endpoint"))
      : new NextResponse("Not found", { status: 404, headers: { "content-type": "text/plain" } });
  }
  const response = NextResponse.next();
  if (pathname.startsWith("/embed/"))
    response.headers.set("Content-Security-Policy", embedContentSecurityPolicy());
  return response;
}

function decodes(pathname: string): boolean {
  try {
    for (const segment of pathname.split("/")) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

export const config = { matcher: ["/embed/:path*", "/(.*%.*)"] };
