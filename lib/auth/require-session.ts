import { ForbiddenError } from "@/lib/errors";
import type { Credential } from "./credential-watch";

// What leads to a new credential — a personal token, an agent key (new or rotated), an invite or
// password-reset link, an account made with a password, the SSO settings that decide who signs in
// as whom — is done from a signed-in session only, never with a bearer key or token. A leaked token
// that could do any of these would outlive its own revocation: a reset link for its own account
// signs in and mints new tokens (issue 24), a minted key or token keeps working once the leaked one
// is revoked. A session comes from a password (or SSO) sign-in, and a password reset ends them all.

/** 403 unless the request authenticated with the web app's session cookie. */
export function requireSignedIn(credential: Credential, what: string): void {
  if (credential.kind !== "session")
    throw new ForbiddenError(
      `${what} from a signed-in session only, never with a key or token (it would outlive the token's revocation). Sign in to the app and do it there.`,
    );
}
