// Signing a test reviewer in to the web app, as the browser does, for tests that call pages,
// server actions or the API with the session cookie.

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
