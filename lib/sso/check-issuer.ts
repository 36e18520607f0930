import { InvalidRequestError } from "@/lib/errors";

// Saving settings whose issuer does not answer would leave a "Sign in with …" button that fails
// for everyone; better-auth would only log it. So the issuer is checked when it is saved: its
// discovery document must answer, name this very issuer (OpenID Connect Discovery §4.3: a
// document naming another issuer is refused, as better-auth's callback would refuse its tokens),
// and list the endpoints the sign-in needs.

const DISCOVERY_TIMEOUT_MS = 5_000;

type Discovery = {
  issuer?: unknown;
  authorization_endpoint?: unknown;
  token_endpoint?: unknown;
  jwks_uri?: unknown;
};

/** What the save keeps of the discovery document: where the client secret will be sent. */
export type CheckedIssuer = { tokenEndpoint: string };

export async function checkIssuer(issuer: string): Promise<CheckedIssuer> {
  const url = `${issuer}/.well-known/openid-configuration`;
  const refuse = (why: string): never => {
    throw new InvalidRequestError(`Invalid request: issuer: ${why}`, [
      { path: "issuer", message: why },
    ]);
  };
  let document: Discovery;
  try {
    const response = await fetch(url, {
      headers: { accept: "application/json" },
      redirect: "error",
      signal: AbortSignal.timeout(DISCOVERY_TIMEOUT_MS),
    });
    if (!response.ok) return refuse(`${url} answered ${response.status}`);
    document = (await response.json()) as Discovery;
  } catch (error) {
    if (error instanceof InvalidRequestError) throw error;
    return refuse(`${url} did not answer with a discovery document`);
  }
  if (typeof document !== "object" || document === null)
    return refuse(`${url} is not a discovery document`);
  if (document.issuer !== issuer)
    return refuse(`the discovery document names the issuer ${JSON.stringify(document.issuer)}`);
  for (const field of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
    if (typeof document[field] !== "string")
      return refuse(`the discovery document has no ${field}`);
  }
  return { tokenEndpoint: document.token_endpoint as string };
}
