import { SsoSettingsInput } from "@/lib/sso/sso-settings";
import { json } from "@/lib/http/api-route";
import { getSsoSettings } from "@/lib/sso/get-sso-settings";
import { saveSsoSettings } from "@/lib/sso/save-sso-settings";
import { defineEndpoint } from "../endpoint";

export const ssoEndpoints = [
  defineEndpoint({
    method: "GET",
    path: "/sso",
    auth: "reviewer",
    operationId: "getSsoSettings",
    tag: "SingleSignOn",
    summary: "The single sign-on settings (admins), without the client secret",
    ok: { status: 200, schema: "SsoSettings" },
    errors: [401, 403],
    handler: async ({ actor }) => json(await getSsoSettings(actor)),
  }),
  defineEndpoint({
    method: "PUT",
    path: "/sso",
    auth: "session",
    // the identity provider decides who signs in as whom, with which roles
    signedIn: "Single sign-on is configured",
    operationId: "saveSsoSettings",
    tag: "SingleSignOn",
    summary: "Replace the single sign-on settings (admins)",
    description:
      "The issuer's discovery document (<issuer>/.well-known/openid-configuration) must answer and name the same issuer, or the answer is 400 and nothing is written. clientSecret is write-only: leave it out to keep the stored one. Only an existing, active person (matched by an email the provider verified) signs in, or anyone with a verified email in allowedDomains; groupRoles grant queue roles from the groupsClaim at each sign-in. Writes an sso.settings_updated event.",
    body: SsoSettingsInput,
    ok: { status: 200, schema: "SsoSettings" },
    errors: [400, 401, 403, 413, 415],
    handler: async ({ body, actor }) =>
      json({ configured: true, settings: await saveSsoSettings(actor, body) }),
  }),
];
