import { pageContentSecurityPolicy } from "@/lib/http/content-security-policy";
import { setting } from "@/lib/config/settings";

// EMBED_ALLOWED_ORIGINS: the comma-separated origins (`https://app.example.com`, scheme, host and
// port only) whose pages may frame /embed/… and receive its decision messages. Read on every
// request, so changing it needs a restart, not a rebuild.

// Exact origins only: a wildcard, a path or "*" is ignored rather than widened into a grant, and
// nothing that could end the CSP directive (a space, a ";") survives.
const ORIGIN = /^https?:\/\/(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/;

export function embedAllowedOrigins(value = setting("EMBED_ALLOWED_ORIGINS")): string[] {
  const origins = new Set<string>();
  for (const entry of (value ?? "").split(",")) {
    const origin = exactOrigin(entry.trim());
    if (origin) origins.add(origin);
  }
  return [...origins];
}

function exactOrigin(text: string): string | null {
  if (!text) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  const bare = url.pathname === "/" && !url.search && !url.hash && !url.username && !url.password;
  return bare && ORIGIN.test(url.origin) ? url.origin : null;
}

/** The CSP for /embed/…: the pages' policy; the app itself and the configured hosts may frame it. */
export function embedContentSecurityPolicy(nonce: string, origins = embedAllowedOrigins()): string {
  return pageContentSecurityPolicy(nonce, ["'self'", ...origins]);
}
