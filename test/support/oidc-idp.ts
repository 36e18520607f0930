import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider, { type KoaContextWithOIDC } from "oidc-provider";

// A real OpenID Connect provider (the `oidc-provider` package) on loopback, for the single sign-on
// tests. Its login step has no form: the test names who is "at the keyboard" (signInAs) and the
// interaction signs that user in at once, or refuses (access_denied) when nobody is named. Consent
// is granted to the one client up front. Everything else — discovery, PKCE, the code exchange,
// signed ID tokens, userinfo — is the package's own.

export type IdpUser = {
  sub: string;
  email: string;
  email_verified: boolean;
  name: string;
  groups?: string[];
};

export type TestIdp = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** who the next sign-in at the provider is (null: the provider refuses) */
  signInAs: (user: IdpUser | null) => void;
  stop: () => Promise<void>;
};

export async function startTestIdp(options: { redirectUri: string }): Promise<TestIdp> {
  const clientId = "countersign-test";
  const clientSecret = `idp-secret-${Math.random().toString(36).slice(2)}`;
  let current: IdpUser | null = null;
  const accounts = new Map<string, IdpUser>();

  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
    ],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      profile: ["name", "groups"],
    },
    async findAccount(_ctx: KoaContextWithOIDC, id: string) {
      const user = accounts.get(id);
      if (!user) return undefined;
      return { accountId: id, claims: async () => ({ ...user }) };
    },
    features: { devInteractions: { enabled: false } },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}`,
    },
    // Consent is given for this test client: no consent screen.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const { client, session } = ctx.oidc;
      if (!client || !session?.accountId) return undefined;
      const existing = session.grantIdFor(client.clientId);
      if (existing) return ctx.oidc.provider.Grant.find(existing);
      const grant = new ctx.oidc.provider.Grant({
        clientId: client.clientId,
        accountId: session.accountId,
      });
      grant.addOIDCScope("openid email profile");
      await grant.save();
      return grant;
    },
    cookies: { keys: ["countersign-test-idp"] },
    // Short lives, set so the package does not warn that they were left to its defaults.
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600 },
  });
  const oidc = provider.callback();

  server.on("request", async (req, res) => {
    if (!req.url?.startsWith("/interaction/")) return oidc(req, res);
    try {
      await provider.interactionDetails(req, res);
      if (!current) {
        await provider.interactionFinished(req, res, {
          error: "access_denied",
          error_description: "The test provider signed nobody in.",
        });
        return;
      }
      accounts.set(current.sub, current);
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: current.sub } },
        { mergeWithLastSubmission: false },
      );
    } catch (error) {
      res.statusCode = 500;
      res.end(String(error));
    }
  });

  return {
    issuer,
    clientId,
    clientSecret,
    signInAs: (user) => {
      current = user;
      if (user) accounts.set(user.sub, user);
    },
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
