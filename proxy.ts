import { NextResponse } from "next/server";
import { embedContentSecurityPolicy } from "@/app/embed/allowed-origins";

// Only the embed route may be framed, and only by EMBED_ALLOWED_ORIGINS. The header is set here
// rather than in next.config.ts because `next build` freezes config headers into the build: a
// host added at deploy time would otherwise need a rebuild.
export function proxy() {
  const response = NextResponse.next();
  response.headers.set("Content-Security-Policy", embedContentSecurityPolicy());
  return response;
}

export const config = { matcher: "/embed/:path*" };
