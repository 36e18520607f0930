import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Compressed responses are buffered, which would hold back server-sent events; the pages are
  // small and usually sit behind a proxy that compresses anyway.
  compress: false,
  // The native libSQL driver must be loaded by Node at run time, not bundled.
  serverExternalPackages: ["@libsql/client", "libsql"],
  poweredByHeader: false,
  // Nothing of the app may be framed by another site (one click approves): only the embed route,
  // for EMBED_ALLOWED_ORIGINS (proxy.ts), and sign-in, which a reviewer reaches inside that frame.
  headers: async () => [
    {
      source: "/((?!embed/|sign-in).*)",
      headers: [
        { key: "Content-Security-Policy", value: "frame-ancestors 'self'" },
        { key: "X-Frame-Options", value: "SAMEORIGIN" },
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
