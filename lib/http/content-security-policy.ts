// The Content-Security-Policy of the app's pages. Scripts, styles, fetches, images and fonts come
// from the app's own origin only, so injected markup can neither load code from elsewhere nor
// send what it reads to another site (connect-src, img-src, form-action). Inline scripts run only
// with the request's nonce (proxy.ts makes one per request; Next.js puts it on its hydration
// scripts, the root layout on the theme script), so markup that slips into a page cannot run
// script, and no script may turn a string into code (no 'unsafe-eval': the card checks a tool's
// input schema with an interpreting validator, not Ajv's compiler) except under `next dev`, whose
// React rebuilds server stack traces with eval. Styles keep 'unsafe-inline': React's
// `style` attributes cannot carry a nonce, and a style cannot run script.

/** A fresh nonce: 128 random bits, base64. Used once, for one response. */
export function newNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * A page's policy for one response. No page may be framed (a framed page can be clicked through
 * by a site laid over it: one click approves), except the embed route's, which names its hosts
 * (app/embed/allowed-origins.ts).
 */
export function pageContentSecurityPolicy(
  nonce: string,
  frameAncestors: string[] = ["'none'"],
): string {
  const devEval = process.env.NODE_ENV === "development" ? " 'unsafe-eval'" : "";
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'${devEval}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors.join(" ")}`,
  ].join("; ");
}

/** API answers are data, never documents to render or frame. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";
