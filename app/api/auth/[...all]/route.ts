import { publicBaseUrl } from "@/lib/config/listen-address";
import { getAuth, sessionUser } from "@/lib/auth/better-auth";
import { CLIENT_ADDRESS_HEADER, clientAddress } from "@/lib/auth/client-address";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { getSsoAuth } from "@/lib/sso/sso-auth";
import { SSO_PROVIDER_ID } from "@/lib/sso/sso-settings";
import { runSsoRequest } from "@/lib/sso/sso-sign-in";

export const dynamic = "force-dynamic";

/**
 * Single sign-on's two steps: the sign-in page's POST that starts it, and the identity provider's
 * redirect back (a top-level GET from another site: the proxy leaves /api/ alone, and better-auth
 * checks its state, PKCE verifier and nonce). Both are served by the instance that knows the
 * provider (getSsoAuth).
 */
const SSO_PATHS = new Set(["/api/auth/sign-in/social", `/api/auth/callback/${SSO_PROVIDER_ID}`]);

// better-auth's own endpoints: sign in, sign out, session. Its sign-in limit counts per
// CLIENT_ADDRESS_HEADER; under `next dev`, where no server stamped that header, a client's own
// value is replaced by the fallback address (lib/auth/client-address.ts).
async function handle(request: Request): Promise<Response> {
  const address = clientAddress(request.headers);
  if (request.headers.get(CLIENT_ADDRESS_HEADER) !== address) {
    const headers = new Headers(request.headers);
    headers.set(CLIENT_ADDRESS_HEADER, address);
    request = new Request(request, { headers });
  }
  if (!SSO_PATHS.has(new URL(request.url).pathname)) return (await getAuth()).handler(request);
  const sso = await getSsoAuth();
  if (!sso) {
    // Switched off (or never on) while someone was at the provider: back to the password form.
    if (request.method === "GET")
      return Response.redirect(new URL("/sign-in?error=sso_off", publicBaseUrl()), 303);
    return Response.json(
      { error: { code: "not_found", message: "Single sign-on is not configured." } },
      { status: 404 },
    );
  }
  // better-auth also signs in with an ID token posted by the client (for native apps), which skips
  // the provider's page, the state and the nonce bound to this browser: a token lifted from
  // anywhere would do. Countersign only ever uses the redirect.
  if (request.method === "POST") {
    const body: unknown = await request
      .clone()
      .json()
      .catch(() => null);
    if (typeof body === "object" && body !== null && "idToken" in body)
      return Response.json(
        {
          error: {
            code: "invalid_request",
            message:
              "Single sign-on goes through the identity provider's page; an ID token cannot be posted here.",
          },
        },
        { status: 400 },
      );
  }
  // Who the browser is already signed in as, at the provider's redirect back: signing in with
  // an account's password and then with single sign-on proves one hand holds both
  // (admitToAccount, lib/sso/sso-sign-in.ts).
  const signedIn = request.method === "GET" ? await sessionUser(request.headers) : null;
  return runSsoRequest(() => sso.handler(request), signedIn?.id ?? null);
}

export { handle as GET, handle as POST };

export const { PUT, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "POST");
