// The Content-Security-Policy of the app's pages. Scripts, styles, fetches, images and fonts come
// from the app's own origin only, so injected markup can neither load code from elsewhere nor
// send what it reads to another site (connect-src, img-src, form-action). 'unsafe-inline' scripts
// are Next.js's hydration data; 'unsafe-eval' is Ajv compiling a tool's input schema in the card.
// (A nonce per request would drop 'unsafe-inline'; it is left for a later change.)

const PAGE_DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
];

/** A page's policy; `frameAncestors` null leaves framing open (sign-in, reached inside the embed). */
export function pageContentSecurityPolicy(frameAncestors: string[] | null = ["'self'"]): string {
  return [
    ...PAGE_DIRECTIVES,
    ...(frameAncestors ? [`frame-ancestors ${frameAncestors.join(" ")}`] : []),
  ].join("; ");
}

/** API answers are data, never documents to render or frame. */
export const API_CONTENT_SECURITY_POLICY = "default-src 'none'; frame-ancestors 'none'";
