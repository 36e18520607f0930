import type { NextConfig } from "next";
import {
  API_CONTENT_SECURITY_POLICY,
  pageContentSecurityPolicy,
} from "./lib/http/content-security-policy";

const nextConfig: NextConfig = {
  // Compressed responses are buffered, which would hold back server-sent events; the pages are
  // small and usually sit behind a proxy that compresses anyway.
  compress: false,
  // The native libSQL driver must be loaded by Node at run time, not bundled.
  serverExternalPackages: ["@libsql/client", "libsql"],
  poweredByHeader: false,
  // A Content-Security-Policy on every page (lib/http/content-security-policy.ts). Nothing may be
  // framed by another site (one click approves): only the embed route, for EMBED_ALLOWED_ORIGINS
  // (its policy is set per request in proxy.ts), and sign-in, reached inside that frame.
  headers: async () => [
    {
      source: "/((?!embed/|sign-in|api/).*)",
      headers: [
        { key: "Content-Security-Policy", value: pageContentSecurityPolicy() },
        { key: "X-Frame-Options", value: "SAMEORIGIN" },
      ],
    },
    {
      source: "/sign-in",
      headers: [{ key: "Content-Security-Policy", value: pageContentSecurityPolicy(null) }],
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
  // The embed route's Content-Security-Policy (frame-ancestors from EMBED_ALLOWED_ORIGINS) is set
  // per request in proxy.ts: headers listed here are frozen into the build by `next build`.
  // `npm test` type-checks the whole project (tests included) with `tsc` before it builds; the
  // build need not do it again.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
