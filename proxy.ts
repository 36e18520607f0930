import { NextResponse, type NextRequest } from "next/server";
import { embedContentSecurityPolicy } from "@/app/embed/allowed-origins";
import { NotFoundError, toResponse } from "@/lib/errors";
import { newNonce, pageContentSecurityPolicy } from "@/lib/http/content-security-policy";
import { jsonTextTooDeep } from "@/lib/http/json-depth";

// Runs only for the paths its matcher names, so the API's hot paths never pay for it:
// - pages: each response's Content-Security-Policy, with a fresh nonce for its inline scripts
//   (lib/http/content-security-policy.ts). Next.js reads the nonce from the policy on the
//   request and puts it on its own scripts; the root layout reads `x-nonce`. Only the embed
//   route (its sign-in included) may be framed, and only by EMBED_ALLOWED_ORIGINS, read here at
//   run time (next.config headers are frozen into the build, so a host added at deploy time would
//   need a rebuild); every other page by nobody.
// - a POST to a page (a server action) from another site: Next refuses to run the action, but
//   answers 500 with an error digest; this answers 403 first, with no stack or digest, under the
//   same rule (the Origin's host must be the request's host).
// - a server action whose arguments nest so deep that Next's decoder would overflow: 400.
// - a path with a percent sign: Next answers a bare 500 for an escape that does not decode
//   (`/api/v1/batches/%`); no such id can exist, so it is answered as a missing one.
export async function proxy(request: NextRequest) {
  const { pathname } = request.nextUrl;
  if (!decodes(pathname)) {
    return pathname.startsWith("/api/")
      ? toResponse(new NotFoundError("Endpoint"))
      : new NextResponse("Not found", { status: 404, headers: { "content-type": "text/plain" } });
  }
  if (pathname.startsWith("/api/")) return NextResponse.next();
  if (request.method === "POST" && crossSite(request)) {
    return new NextResponse("Forbidden: another site cannot call this app's server actions.", {
      status: 403,
      headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
    });
  }
  if (request.method === "POST" && (await serverActionTooDeep(request))) {
    return new NextResponse(
      `Bad request: server action arguments may nest at most ${ACTION_DEPTH_LIMIT} levels deep.`,
      {
        status: 400,
        headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" },
      },
    );
  }
  const nonce = newNonce();
  const policy = pathname.startsWith("/embed/")
    ? embedContentSecurityPolicy(nonce)
    : pageContentSecurityPolicy(nonce);
  const requestHeaders = new Headers(request.headers);
  requestHeaders.set("content-security-policy", policy);
  requestHeaders.set("x-nonce", nonce);
  const response = NextResponse.next({ request: { headers: requestHeaders } });
  response.headers.set("Content-Security-Policy", policy);
  return response;
}

/**
 * Next.js's own test for a server action (its action handler): an Origin whose host is not the
 * request's (X-Forwarded-Host first, as behind a proxy). No Origin at all is let through to Next
 * as it lets it (old clients; browsers send one on every POST); an opaque `null` is refused.
 */
function crossSite(request: NextRequest): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

/**
 * Past this, Next's own decoding of a server action's arguments overflows the stack (500) before
 * the action can refuse them: bodies that deep are answered 400 here. Shallower ones reach the
 * action, whose own check (lib/http/json-depth.ts, 256 levels) answers in the action's terms.
 */
const ACTION_DEPTH_LIMIT = 1_024;

/** A server action's JSON-encoded arguments (FormData posts are multipart and left to Next). */
async function serverActionTooDeep(request: NextRequest): Promise<boolean> {
  if (!request.headers.has("next-action")) return false;
  if (!request.headers.get("content-type")?.startsWith("text/plain")) return false;
  return jsonTextTooDeep(await request.clone().text(), ACTION_DEPTH_LIMIT);
}

function decodes(pathname: string): boolean {
  try {
    for (const segment of pathname.split("/")) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

export const config = {
  // Every page (not the API, not the build's static files), and API paths with a '%'.
  matcher: ["/((?!api/|_next/static/|_next/image|favicon\\.ico).*)", "/(.*%.*)"],
};
