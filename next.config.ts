import type { NextConfig } from "next";

const nextConfig: NextConfig = {
  // Compressed responses are buffered, which would hold back server-sent events; the pages are
  // small and usually sit behind a proxy that compresses anyway.
  compress: false,
  // The native libSQL driver must be loaded by Node at run time, not bundled.
  serverExternalPackages: ["@libsql/client", "libsql"],
  poweredByHeader: false,
};

export default nextConfig;
