import type { IdpUser, TestIdp } from "./oidc-idp";

// Single sign-on driven over plain HTTP, as a browser does it but without one: start at the app
// (POST /api/auth/sign-in/social), follow the identity provider's redirects (the test provider
// signs in whoever `signInAs` names, with no form), and bring the code back to the app's
// callback. Two cookie jars, one per origin (the app and the provider both live on 127.0.0.1,
// where cookies do not tell ports apart). What the attack replays of issue 24 run.

/** A tiny cookie jar: name → value, as Set-Cookie left them. */
export class CookieJar {
  private cookies = new Map<string, string>();
  constructor(initial = "") {
    for (const part of initial.split(";")) {
      const [name, ...value] = part.trim().split("=");
      if (name) this.cookies.set(name, value.join("="));
    }
  }
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const at = pair!.indexOf("=");
      const name = pair!.slice(0, at).trim();
      const value = pair!.slice(at + 1);
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
  has(name: string): boolean {
    return [...this.cookies.keys()].some((k) => k.includes(name));
  }
}

export type SsoOutcome = {
  /** where the app's callback sent the browser: the callbackURL, or the error page */
  location: string;
  /** the `error` the app put in that location, or null */
  error: string | null;
  /** the app's cookies after the callback (a session cookie when it signed someone in) */
  jar: CookieJar;
  /** who the session is for, by GET /api/auth/get-session (null: no session) */
  signedInAs: { id: string; email: string } | null;
};

/**
 * One single sign-on at `baseUrl` as `user` (at `idp`). `appCookies` are the browser's cookies at
 * the app before it starts (a password session, for the "sign in with your password once" proof).
 */
export async function ssoSignInOverHttp(
  baseUrl: string,
  idp: TestIdp,
  user: IdpUser,
  appCookies = "",
): Promise<SsoOutcome> {
  const app = new CookieJar(appCookies);
  const provider = new CookieJar();
  idp.signInAs(user);
  const start = await fetch(`${baseUrl}/api/auth/sign-in/social`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl, cookie: app.header() },
    body: JSON.stringify({
      provider: "sso",
      callbackURL: "/queue",
      errorCallbackURL: "/sign-in",
    }),
  });
  if (start.status !== 200)
    throw new Error(`sign-in/social answered ${start.status}: ${await start.text()}`);
  app.take(start);
  let url = ((await start.json()) as { url: string }).url;
  // The provider's redirects, until one points back at the app.
  for (let hop = 0; !url.startsWith(baseUrl); hop++) {
    if (hop > 10) throw new Error(`the provider redirected too often (last: ${url})`);
    const response = await fetch(url, {
      headers: { cookie: provider.header() },
      redirect: "manual",
    });
    provider.take(response);
    const next = response.headers.get("location");
    if (!next) throw new Error(`the provider answered ${response.status} at ${url}`);
    url = new URL(next, url).toString();
  }
  const callback = await fetch(url, { headers: { cookie: app.header() }, redirect: "manual" });
  app.take(callback);
  const location = new URL(callback.headers.get("location") ?? "", baseUrl);
  const session = await fetch(`${baseUrl}/api/auth/get-session`, {
    headers: { cookie: app.header() },
  });
  const body = (await session.json().catch(() => null)) as {
    user?: { id: string; email: string };
  } | null;
  return {
    location: `${location.pathname}${location.search}`,
    error: location.searchParams.get("error"),
    jar: app,
    signedInAs: body?.user ? { id: body.user.id, email: body.user.email } : null,
  };
}
