import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Compressed responses are buffered, which would hold back server-sent events; the pages are
  // small and usually sit behind a proxy that compresses anyway.
  compress: false,
  // The native libSQL driver must be loaded by Node at run time, not bundled.
  serverExternalPackages: ["@libsql/client", "libsql"],
  poweredByHeader: false,
  // `npm test` type-checks the whole project (tests included) with `tsc` before it builds; the
  // build need not do it again.
  typescript: { ignoreBuildErrors: true },
};

export default nextConfig;
