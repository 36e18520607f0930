import { requireSignedIn } from "@/lib/auth/require-session";
import { apiRoute, json } from "@/lib/http/api-route";
import { refuseOtherMethods } from "@/lib/http/method-not-allowed";
import { getSsoSettings } from "@/lib/sso/get-sso-settings";
import { saveSsoSettings } from "@/lib/sso/save-sso-settings";

export const dynamic = "force-dynamic";

export const GET = apiRoute(async ({ actor }) => json(await getSsoSettings(actor)));

export const PUT = apiRoute(async ({ body, actor, credential }) => {
  // the identity provider decides who signs in as whom, with which roles
  requireSignedIn(credential, "Single sign-on is configured");
  return json({ configured: true, settings: await saveSsoSettings(actor, body) });
});

export const { POST, PATCH, DELETE, OPTIONS } = refuseOtherMethods("GET", "PUT");
