// What the sign-in page says when single sign-on comes back refused (`/sign-in?error=<code>`, set by
// better-auth's callback or by the rules in sso-sign-in.ts). Only these codes are explained; any
// other (a provider error, a state that expired) gets the general line, never the raw text, which
// anyone can put in a link.
const MESSAGES: Record<string, string> = {
  signup_disabled:
    "No Countersign account matches the email your identity provider gave. Ask an admin to invite you.",
  account_not_linked:
    "Your identity provider has not verified your email address, so it cannot sign you in to your Countersign account.",
  email_not_verified:
    "Your identity provider has not verified your email address, so it cannot sign you in.",
  password_proof_required:
    "Your Countersign account has a password that single sign-on cannot vouch for: it was set through an invite or reset link, which someone else may hold. Sign in with that password once below and single sign-on is linked to it. If you do not know the password, ask an admin for a password-reset link.",
  account_deactivated: "This account is deactivated. Ask an admin if you need access again.",
  access_denied: "Single sign-on was cancelled at your identity provider.",
  sso_off: "Single sign-on is switched off. Sign in with your password.",
};

/** The refusal after which a password sign-in goes straight on to single sign-on, linking the two. */
export const PASSWORD_PROOF_REQUIRED = "password_proof_required";

export function ssoErrorMessage(code: unknown): string | null {
  if (typeof code !== "string" || code === "") return null;
  return (
    MESSAGES[code] ?? "Single sign-on did not complete. Try again, or sign in with your password."
  );
}
