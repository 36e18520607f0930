// Signing a test reviewer in to the web app, as the browser does, for tests that call pages,
// server actions or the API with the session cookie.

import { apiClient, type ApiClient } from "./http";

/** The factories' password for every test reviewer. */
export const TEST_PASSWORD = "correct horse battery";

/** POST /api/auth/sign-in/email from the app's own origin. */
export function signInRequest(baseUrl: string, email: string, password = TEST_PASSWORD) {
  return fetch(`${baseUrl}/api/auth/sign-in/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: baseUrl },
    body: JSON.stringify({ email, password }),
  });
}

/** The `Cookie` header value of a signed-in session (every cookie the sign-in set). */
export async function sessionCookie(
  baseUrl: string,
  email: string,
  password = TEST_PASSWORD,
): Promise<string> {
  const response = await signInRequest(baseUrl, email, password);
  if (response.status !== 200)
    throw new Error(`sign-in of ${email} answered ${response.status}: ${await response.text()}`);
  return response.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
}

/**
 * An API client signed in as `email` (the session cookie, from the app's own origin), as the web
 * app calls the API: what creates credentials (links, keys, tokens, SSO) takes a session only.
 */
export async function sessionClient(baseUrl: string, email: string): Promise<ApiClient> {
  const session = { cookie: await sessionCookie(baseUrl, email), origin: baseUrl };
  const client = apiClient(baseUrl);
  return {
    get: (path, headers = {}) => client.get(path, { ...session, ...headers }),
    post: (path, body, headers = {}) => client.post(path, body, { ...session, ...headers }),
    raw: (path, init = {}) =>
      client.raw(path, {
        ...init,
        headers: { ...session, ...(init.headers as Record<string, string> | undefined) },
      }),
  };
}
