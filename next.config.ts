import type { NextConfig } from "next";
import { API_CONTENT_SECURITY_POLICY } from "./lib/http/content-security-policy";

const nextConfig: NextConfig = {
  // Compressed responses are buffered, which would hold back server-sent events; the pages are
  // small and usually sit behind a proxy that compresses anyway.
  compress: false,
  // The native libSQL driver must be loaded by Node at run time, not bundled; prom-client too, so
  // that Next's bundle and the production server share one copy (lib/metrics/metrics.ts).
  serverExternalPackages: [
    "@libsql/client",
    "@libsql/core",
    "@libsql/hrana-client",
    "libsql",
    "prom-client",
  ],
  poweredByHeader: false,
  // Pages get their Content-Security-Policy per request in proxy.ts (it carries a fresh nonce).
  // Nothing may be framed (one click approves): only the embed route, for EMBED_ALLOWED_ORIGINS,
  // with its own sign-in page (app/embed/sign-in).
  headers: async () => [
    {
      source: "/((?!embed/|api/).*)",
      headers: [{ key: "X-Frame-Options", value: "DENY" }],
    },
    {
      source: "/api/:path*",
      headers: [
        { key: "Content-Security-Policy", value: API_CONTENT_SECURITY_POLICY },
        { key: "X-Frame-Options", value: "DENY" },
        { key: "X-Content-Type-Options", value: "nosniff" },
      ],
    },
  ],
  // `npm test` type-checks the whole project (tests included) with `tsc` before it builds; the
  // build need not do it again.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
